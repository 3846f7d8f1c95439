#!/bin/bash
# pfleet without a server: --help (its man page: t0150, t0161), usage errors, a server
# that is down (the batches go to the spool, nothing lost, exit 2), a spool
# on a full disk, get from a server that is down.
. "$(dirname "$0")/../lib.sh"
DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
export PFLEET_SPOOL=$T/spool TMPDIR=$T # put's per-host lock files, removed with the rest

pfleet --help > "$T/h" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '^usage: pfleet init' "$T/h"; then ok "pfleet --help: synopsis, exit 0"; else notok "pfleet --help (exit $rc)"; fi
pfleet --version > "$T/o" 2>&1 && grep -qx 'pfleet (stackpipe) [0-9.]*' "$T/o" && ok "pfleet --version" || notok "pfleet --version"

# usage errors: one reason, the usage line, exit 2, nothing written
U=http://127.0.0.1:9
check_usage() { # NAME PATTERN ARGS...
	local name=$1 pat=$2; shift 2
	pfleet "$@" > "$T/o" 2> "$T/e"; local rc=$?
	if [ $rc = 2 ] && [ ! -s "$T/o" ] && grep -q -- "$pat" "$T/e" && grep -q '^usage: pfleet' "$T/e"; then ok "$name"
	else notok "$name (exit $rc)"; head -3 "$T/e" | sed 's/^/  /'; fi
}
check_usage "no subcommand" "no subcommand" 
check_usage "unknown subcommand" "unknown subcommand 'pull'" pull $U
check_usage "no URL" "no URL" get --service api
check_usage "a bad time" "--since 'yesterday': a time is" get --since yesterday $U
check_usage "a bad label" "--label 'release': a label is KEY=VALUE" put --label release $U
check_usage "--bucket 0" "--bucket '0'" put --bucket 0 $U
check_usage "--by what" "--by 'cpu': host or time" get --by cpu $U
check_usage "hosts without --function" "no --function" hosts $U
check_usage "--since after --until" "--since is not before --until" get --since -1h --until -2h $U
check_usage "an unknown option" "unrecognized option '--no-such-option'" get --no-such-option $U
# each usage error prints its own subcommand's usage line
for a in "get|get --since yesterday $U" "get|get --by bogus $U" "put|put --bucket 0 $U" "hosts|hosts $U" "put|put --spool-max 0 $U" "prune|prune --ttl x $U"; do
	set -- ${a#*|}
	pfleet "$@" > /dev/null 2> "$T/e"
	grep -q "^usage: pfleet ${a%%|*} " "$T/e" && [ "$(grep -c '^usage:' "$T/e")" = 1 ] && ok "pfleet ${a#*|}: the usage of ${a%%|*}" || { notok "usage of ${a#*|}"; cat "$T/e"; }
done
pfleet get --service api http://127.0.0.1:9/foo > "$T/o" 2> "$T/e"; rc=$?
[ $rc = 2 ] && grep -q "^pfleet: http://127.0.0.1:9/foo: the path '/foo': " "$T/e" && ok "a URL with a path: an error naming the path, exit 2" || { notok "URL with a path (exit $rc)"; cat "$T/e"; }
pfleet get --service api ftp://x > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pfleet: ftp://x: not an http:// URL" "$T/e"; then ok "not an http URL: one sentence, exit 2"; else notok "ftp URL (exit $rc)"; cat "$T/e"; fi
pfleet get --service api --database 'x;drop' $U > "$T/o" 2> "$T/e"; rc=$?
[ $rc = 2 ] && grep -q "a name of letters, digits and '_'" "$T/e" && ok "--database: only a plain name" || notok "--database check (exit $rc)"

# the server is down: put spools every batch, says so, exits 2; the input is untouched
port=$((20000 + RANDOM % 20000))
while (exec 3<> /dev/tcp/127.0.0.1/$port) 2> /dev/null; do port=$((port + 1)); done
D=http://127.0.0.1:$port
cp "$DEMO" "$T/demo.gz"; sum=$(md5sum < "$T/demo.gz")
pfleet put --retries 1 --service demo --host h1 --start 2026-11-26T10:00:00 $D "$T/demo.gz" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pfleet: $D: cannot connect to 127.0.0.1:$port: Connection refused: [0-9]* rows in 3 batches spooled to $T/spool ('pfleet flush $D' or the next put sends them)" "$T/e"; then
	ok "server down: exit 2, one sentence with the rows spooled and how to send them"; else notok "server down (exit $rc)"; cat "$T/e"; fi
# (records: a header line, then binary rows; read the headers out of the bytes)
spooled() { grep -ao 'pfleet-spool 4 [a-z_]* [0-9]* ' "$1"; }
n=$(spooled "$T/spool" | wc -l)
rows=$(spooled "$T/spool" | awk '$3 == "samples" {s += $4} END {print s}')
said=$(sed -n 's/.*: \([0-9]*\) rows in 3 batches spooled.*/\1/p' "$T/e")
nst=$(spooled "$T/spool" | awk '$3 == "stacks" {s += $4} END {print s}')
nh=$(spooled "$T/spool" | awk '$3 == "samples_hourly" {s += $4} END {print s}')
if [ "$n" = 3 ] && [ $((rows + nst + nh)) = "$said" ] && [ "$rows" -gt 0 ] && [ "$nh" -gt 0 ]; then ok "the spool holds the 3 batches ($rows sample rows, $nst stacks, $nh rollup rows)"; else notok "spool: $n records, $rows+$nst+$nh rows, said $said"; fi
# compact: each record's rows deflated (BYTES against RAW in its header)
set -- $(grep -ao 'pfleet-spool 4 [a-z_]* [0-9]* [0-9a-f]* [0-9]* [0-9]* [0-9]* [0-9]*' "$T/spool" | awk '{b += $8; r += $9} END {print b + 0, r + 0}')
[ "$1" -gt 0 ] && [ $(($1 * 3)) -lt "$2" ] && ok "the spool is compact: $1 bytes for $2 bytes of rows ($(($1 / (rows + nst + nh))) a row)" || notok "spool bytes $1 of $2"
[ "$(md5sum < "$T/demo.gz")" = "$sum" ] && ok "the input file is untouched" || notok "input changed"
grep -q 'after 0' "$T/e" && notok "no retry" || true
pfleet flush --retries 0 $D > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "Connection refused: the spool $T/spool keeps its batches" "$T/e" && [ "$(spooled "$T/spool" | wc -l)" = 3 ]; then
	ok "flush while still down: exit 2, the spool keeps the 3 batches"; else notok "flush while down (exit $rc)"; cat "$T/e"; fi

# a spool on a full disk: said, exit 2, counted as not stored
if [ -w /dev/full ]; then
	pfleet put --retries 0 --spool /dev/full --service demo $D "$T/demo.gz" > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q "cannot write the spool /dev/full: No space left on device: [0-9]* rows not stored" "$T/e"; then ok "spool on a full disk: said, with the rows not stored, exit 2"
	else notok "full spool (exit $rc)"; cat "$T/e"; fi
else skip "full spool" "/dev/full is not writable here"; fi

# a bounded spool: a batch that would pass --spool-max is not spooled, said, exit 2
pfleet put --retries 0 --spool "$T/small" --spool-max 1K --service demo --start 2026-11-26T10:00:00 $D "$T/demo.gz" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "the spool $T/small is full ([0-9]* bytes; --spool-max 1024): [0-9]* rows not stored" "$T/e" && [ "$(stat -c %s "$T/small" 2> /dev/null || echo 0)" -le 1024 ]; then
	ok "--spool-max 1K: the spool stays under it, the rows not spooled are said, exit 2"; else notok "--spool-max (exit $rc)"; cat "$T/e"; fi
pfleet flush --spool "$T/none" $D > "$T/o" 2> "$T/e"; rc=$?
[ $rc = 0 ] && grep -q "^pfleet: the spool $T/none holds nothing to send" "$T/e" && ok "flush of an empty spool says so, exit 0" || { notok "flush of nothing (exit $rc)"; cat "$T/e"; }

# a server that is not ClickHouse (python's http.server answers a POST 501):
# exit 2 with its answer, nothing spooled (it would never take it)
if command -v python3 > /dev/null; then
	pport=$((port + 1))
	while (exec 3<> /dev/tcp/127.0.0.1/$pport) 2> /dev/null; do pport=$((pport + 1)); done
	(cd "$T" && exec python3 -m http.server --bind 127.0.0.1 $pport > /dev/null 2>&1) & hp=$!
	for i in $(seq 100); do (exec 3<> /dev/tcp/127.0.0.1/$pport) 2> /dev/null && break; sleep 0.1; done
	pfleet put --spool "$T/nots" --service demo http://127.0.0.1:$pport "$T/demo.gz" > "$T/o" 2> "$T/e"; rc=$?
	kill $hp 2> /dev/null; wait $hp 2> /dev/null
	if [ $rc = 2 ] && grep -q "^pfleet: http://127.0.0.1:$pport: not a ClickHouse server (HTTP 501, no ClickHouse error in the answer): " "$T/e" && [ ! -s "$T/nots" ]; then
		ok "a server that is not ClickHouse (HTTP 501): its answer, exit 2, nothing spooled"; else notok "not ClickHouse (exit $rc)"; cat "$T/e"; fi
else skip "not ClickHouse" "python3 is not installed"; fi

# a server that answers questions as ClickHouse does and every INSERT with
# STATUS and BODY: a ClickHouse error of a server short of memory (code
# 241) or a proxy's 503 is for later (spooled, exit 2), one of the request
# itself (code 16, no such column) is not (exit 2, its sentence, nothing spooled)
if command -v python3 > /dev/null; then
	cat > "$T/fake.py" <<'PY'
import http.server, sys, urllib.parse
status, body = int(sys.argv[2]), sys.argv[3].encode()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get('Content-Length', 0)); data = self.rfile.read(n)
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query).get('query', [''])[0]
        if q.startswith('INSERT'): code, out = status, body
        elif b'system.columns' in data: code, out = 200, b'clickhouse\t\t\n'
        elif q.startswith('SELECT count()') or data.startswith(b'SELECT count()'): code, out = 200, b'0\n'
        else: code, out = 200, b''
        self.send_response(code); self.send_header('Content-Length', str(len(out))); self.end_headers(); self.wfile.write(out)
http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
PY
	fake() { # NAME STATUS BODY SPOOLED(yes|no) PATTERN
		local fport=$((port + 2)) fp
		while (exec 3<> /dev/tcp/127.0.0.1/$fport) 2> /dev/null; do fport=$((fport + 1)); done
		python3 "$T/fake.py" $fport "$2" "$3" & fp=$!
		for i in $(seq 100); do (exec 3<> /dev/tcp/127.0.0.1/$fport) 2> /dev/null && break; sleep 0.1; done
		rm -f "$T/fs"
		pfleet put --retries 0 --spool "$T/fs" --service demo --start 2026-11-26T10:00:00 http://127.0.0.1:$fport "$T/demo.gz" > /dev/null 2> "$T/e"; rc=$?
		kill $fp; wait $fp 2> /dev/null
		local spooled=no; [ -s "$T/fs" ] && spooled=yes
		if [ $rc = 2 ] && grep -q -- "$5" "$T/e" && [ $spooled = $4 ]; then ok "$1"
		else notok "$1 (exit $rc)"; cat "$T/e"; fi
	}
	fake "ClickHouse short of memory (code 241): spooled for later, exit 2" 500 "Code: 241, e.displayText() = DB::Exception: Memory limit (total) exceeded, e.what() = DB::Exception" yes \
		"cannot take it now (HTTP 500): Memory limit (total) exceeded: [0-9]* rows in [0-9]* batches spooled"
	fake "a proxy's 503 before the server: spooled for later, exit 2" 503 "no upstream" yes "the server is unavailable (HTTP 503): no upstream: [0-9]* rows in"
	fake "a ClickHouse error of the request (code 16): its sentence, exit 2, nothing spooled" 500 "Code: 16, e.displayText() = DB::Exception: No such column unit in table samples, e.what() = DB::Exception" no \
		"refused it (HTTP 500): No such column unit in table samples: [0-9]* rows not stored"
fi

# get from a server that is down
pfleet get --service api $D > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ ! -s "$T/o" ] && grep -q "^pfleet: $D: cannot connect to 127.0.0.1:$port: Connection refused" "$T/e"; then ok "get, server down: one sentence, exit 2, no output"
else notok "get down (exit $rc)"; cat "$T/e"; fi
pfleet get --service api -o "$T/keep.sp" $D 2> "$T/e"; echo keep > "$T/keep.sp"
pfleet get --service api -o "$T/keep.sp" $D 2> "$T/e"; rc=$?
[ $rc = 2 ] && [ "$(cat "$T/keep.sp")" = keep ] && ok "get -o FILE: a failure leaves FILE as it was" || notok "get -o kept (exit $rc)"
