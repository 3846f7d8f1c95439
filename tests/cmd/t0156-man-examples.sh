#!/bin/bash
# Every command line of every man page's EXAMPLES runs, as written, on
# stand-in inputs: ./server and ./prog are tests/progs/t015-server.c (threads
# "server", "worker-1", "worker-2" calling handle_request), PID / 1234 /
# $(pidof server) a running copy of it, and the files the lines name are
# made from recordings of it (perf record, pcollect -F 999 --trace: enough
# samples inside the slowest 1 % of calls under ASan too), of the two
# builds of tests/progs/t015-versions.c (v1.sp, v2.sp), of a Go program
# (runtime/pprof's heap profile, heap.pb.gz) or are the project's test
# data.  Durations are shortened (-d N: 1 s, sleep 10: 1 s, -c 100: 5
# snapshots); nothing else of a line is changed.  A line passes
# when it exits 0 (with --exit-code also 1, "they differ"; a pipeline into
# head also 141, the writer's SIGPIPE) and every file it writes with > or
# -o is not empty.  plive's lines run with its output not a terminal (it
# then prints its tables as text; t8000 drives its screen in tmux).  Lines it
# cannot run are listed, with why, as skips.
. "$(dirname "$0")/../lib.sh"

# Once per make check: the lines are the same in both passes.
once_per_check "man EXAMPLES"
command -v gcc > /dev/null || { skip "man EXAMPLES" "gcc is not installed"; exit 0; }
MAN="$SP_TOP/share/man"
W="$T/ex"
mkdir -p "$W"
cd "$W" || exit 0
gcc -O2 -g -fno-omit-frame-pointer -pthread -o server "$SP_TOP/tests/progs/t015-server.c" 2> cc.err ||
	{ notok "build tests/progs/t015-server.c"; head -3 cc.err | sed 's/^/  /'; exit 0; }
cp server prog
export SERVER_SECONDS=1.5
if ! pcollect -q -o /dev/null -- true 2> probe.err; then
	skip "man EXAMPLES" "pcollect cannot sample here: $(head -1 probe.err)"; exit 0
fi

# ---- stand-in inputs ----
pcollect -q -F 999 --trace 'handle_request(arg2)' -o t.sp -- ./server > /dev/null 2> st.err ||
	{ notok "stand-in: pcollect --trace handle_request"; head -3 st.err | sed 's/^/  /'; exit 0; }
for f in prof.sp run.sp a.sp b.sp base.sp new.sp host1.sp host2.sp; do cp t.sp $f; done
# two builds of one program (pdiff.1, pmerge.1: ./v1 against ./v2)
for v in 1 2; do
	gcc -O2 -g -DV=$v -o v$v "$SP_TOP/tests/progs/t015-versions.c" && pcollect -q -o v$v.sp -- ./v$v 0.5 > /dev/null 2>&1
done
pfold t.sp > prof.folded
for f in before after a b run1 run2 java alloc; do cp prof.folded $f.folded; done
gzip -c prof.folded > run3.folded.gz
have_perf=0
if command -v perf > /dev/null && perf record -F 499 -g -o perf.data -- ./server > /dev/null 2> perf.err; then
	have_perf=1
	perf script -i perf.data > perf.txt 2> /dev/null
	gzip -c perf.txt > perf.txt.gz
fi
cp "$SP_TOP/tests/data/t5-pyspy.speedscope.json" py-spy.speedscope.json
have_go=0 go_why="go is not installed (heap.pb.gz is made by runtime/pprof; make deps installs golang-go)"
if command -v go > /dev/null; then
	go_why="the Go heap profile program did not build or run: see go.err"
	mkdir -p goheap && cp "$SP_TOP/tests/progs/t015-goheap.go" goheap/main.go
	(cd goheap && GOFLAGS=-mod=mod GO111MODULE=off go build -o ../goheap.bin main.go) > go.err 2>&1 &&
		./goheap.bin heap.pb.gz && have_go=1
fi

# pfleet(1)'s lines run against a private ClickHouse server (http://db:8123
# becomes its address; "api" is the stand-in server)
CH_URL= ch_why=
. "$SP_TOP/tests/fleet/ch.sh"
trap 'ch_stop_all; sp_cleanup' EXIT
if ch_why=$(ch_available); then
	if ch_start_free "$T/ch" > ch.start 2>&1; then CH_URL=http://127.0.0.1:$CH_HTTP; export PFLEET_SPOOL=$T/spool
	else ch_why="clickhouse-server did not start: $(tail -1 ch.start)"; fi
fi
# the store's other release on a web host, as the page's queries assume: the
# stand-in server's recording (it has no compress(): handle_request stands in)
if [ -n "$CH_URL" ]; then
	{ pfleet init "$CH_URL" && pfleet put --service api --host web-1 --label release=41 "$CH_URL" t.sp; } > ch.put 2>&1 ||
		{ notok "pfleet stand-in data stored"; sed 's/^/  /' ch.put; CH_URL= ch_why="the stand-in data could not be stored"; }
fi

# ---- the lines ----
# The EXAMPLES lines of a page: inside .nf/.fi, starting with a command.
lines() {
	awk '/^\.SH EXAMPLES?/ { e = 1; next } /^\.SH/ { e = 0 } e && /^\.nf/ { nf = 1; next } e && /^\.fi/ { nf = 0; next }
	     e && nf && !/^\./ { print }' "$1" |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\\\/\\/g' -e 's/^ *//' |
		awk '/\\$/ { sub(/\\$/, ""); held = held $0; next } { print held $0; held = "" }' |
		grep -E '^(pcollect|pfold|pfilter|pdiff|pmerge|preport|psvg|pspeedscope|ptimeline|plive|pfleet|sp-dump|perf|go) '
}
# why LINE: why a line cannot run here, or nothing
why() {
	case "$1" in
	"go tool pprof -http="*) echo "go tool pprof -http serves a web page until it is interrupted" ;;
	perf*|*"perf script"*|*perf.data*|*perf.txt*) [ $have_perf = 1 ] || echo "perf record is not usable here: $(tail -1 perf.err 2>/dev/null)" ;;
	*heap.pb.gz*) [ $have_go = 1 ] || echo "$go_why" ;;
	*http://db:8123*) [ -n "$CH_URL" ] || echo "$ch_why" ;;
	esac
}
# a running copy of the stand-in server, for PID, 1234 and $(pidof server)
start_server() {
	SERVER_SECONDS=4 ./server > srv.out 2>&1 &
	SPID=$!
	for _ in $(seq 50); do grep -q ready srv.out 2> /dev/null && break; sleep 0.1; done
}
stop_server() { kill "$SPID" 2> /dev/null; wait "$SPID" 2> /dev/null; }

n=0
for page in "$MAN"/man*/*.[1-9]; do
	pn=$(basename "$page")
	lines "$page" > lines.txt
	while IFS= read -r line; do
		n=$((n + 1))
		label="$pn: $line"
		w=$(why "$line")
		if [ -n "$w" ]; then skip "$label" "$w"; continue; fi
		cmd=$line
		cmd=$(printf '%s' "$cmd" | sed -E 's/ -d (5|10|30|60)( |$)/ -d 1\2/g; s/sleep 10/sleep 1/; s/ -c 100 / -c 5 /')
		pidline=0
		case "$cmd" in *PID*|*1234*|*'$(pidof server)'*|*'$(pidof api)'*) pidline=1 ;; esac
		if [ $pidline = 1 ]; then
			start_server
			cmd=$(printf '%s' "$cmd" | sed -e "s/\\\$(pidof server)/$SPID/g" -e "s/\\\$(pidof api)/$SPID/g" -e "s/\\bPID\\b/$SPID/g" -e "s/\\b1234\\b/$SPID/g")
		fi
		[ -n "$CH_URL" ] && cmd=$(printf '%s' "$cmd" | sed -e "s|http://db:8123|$CH_URL|g" -e 's/--function compress/--function handle_request/')
		# the files it writes: "> FILE" and "-o FILE"
		outs=$(printf '%s\n' "$cmd" | grep -oE '(> |-o )[A-Za-z0-9_.-]+' | awk '$2 != "-" { print $2 }')
		for o in $outs; do rm -f "$o"; done
		timeout 120 bash -o pipefail -c "$cmd" > line.out 2> line.err < /dev/null; rc=$?
		[ $pidline = 1 ] && stop_server
		good="0"
		case "$cmd" in *--exit-code*) good="0 1" ;; esac
		case "$cmd" in *"| head"*) good="$good 141" ;; esac
		bad=
		case " $good " in *" $rc "*) ;; *) bad="exit $rc" ;; esac
		for o in $outs; do [ -s "$o" ] || bad="$bad${bad:+, }$o is empty or missing"; done
		if [ -z "$bad" ]; then ok "$label"
		else notok "$label ($bad; ran: $cmd)"; head -4 line.err | sed 's/^/  /'; fi
	done < lines.txt
done
[ $n -gt 40 ] && ok "$n EXAMPLES lines found" || notok "only $n EXAMPLES lines found"

# stackpipe-stream(5)'s EXAMPLE is bytes, not a command: they are what
# pfold -b writes for "a;b 3" (the trailer's checksum, "...", aside).
want=$(awk '/^\.SH EXAMPLE/ { e = 1; next } /^\.SH/ { e = 0 } e && /^[0-9a-f][0-9a-f] / { sub(/   .*/, ""); sub(/ \.\.\.$/, ""); printf "%s ", $0 }' \
	"$MAN/man5/stackpipe-stream.5" | tr -s ' ')
got=$(printf 'a;b 3\n' | pfold -b | od -An -tx1 | tr -s ' \n' ' ' | sed 's/^ //' | cut -c1-${#want})
size=$(printf 'a;b 3\n' | pfold -b | wc -c)
said=$(sed -n 's/.*as a stream (\([0-9]*\) bytes).*/\1/p' "$MAN/man5/stackpipe-stream.5")
if [ -n "$want" ] && [ "$want" = "$got" ] && [ "$size" = "$said" ]; then ok "stackpipe-stream.5: the example's bytes are pfold -b's ($size bytes, as the page says)"
else notok "stackpipe-stream.5: the example's bytes are pfold -b's ($size bytes)"; printf '  want %s\n  got  %s\n' "$want" "$got"; fi
