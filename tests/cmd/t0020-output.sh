#!/bin/bash
# -o never destroys what the file held when the command fails; a write
# error is reported once, naming the output.
. "$(dirname "$0")/../lib.sh"
gzip -dc "$SP_TOP/share/demo/perf-demo.txt.gz" > "$T/in.perf"
pfold -b "$T/in.perf" > "$T/in.sp"
printf 'a;b 1\n' > "$T/other.folded"
mkdir "$T/d"
# command (with the input error "no such file") for each -o writer
printf 'precious\n' > "$T/precious"
while IFS='|' read -r name good; do
	label=${name//$T\//}
	printf 'precious\n' > "$T/d/keep"
	chmod 640 "$T/d/keep"
	$name "$T/missing" -o "$T/d/keep" 2>"$T/err"; rc=$?
	if [ $rc = 2 ] && cmp -s "$T/d/keep" "$T/precious"; then ok "$label: an input error leaves the -o file as it was"
	else notok "$label: input error: exit $rc, the -o file now holds $(wc -c < "$T/d/keep") bytes"; fi
	$name $good -o "$T/d/keep" 2>"$T/err"; rc=$?
	if [ $rc = 0 ] && ! cmp -s "$T/d/keep" "$T/precious" && [ -s "$T/d/keep" ]; then ok "$label: success replaces the -o file"
	else notok "$label: success: exit $rc"; sed 's/^/  /' "$T/err" | head -3; fi
	m=$(stat -c %a "$T/d/keep")
	[ "$m" = 640 ] && ok "$label: ... keeping its permissions" || notok "$label: permissions now $m, were 640"
	n=$(ls -A "$T/d" | wc -l)
	[ "$n" = 1 ] && ok "$label: no temporary left beside it" || { notok "$label: $n files in the directory"; ls -A "$T/d" | sed 's/^/  /'; }
	$name $good > /dev/full 2>"$T/err"; rc=$?
	if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^${name%% *}: write error on standard output: No space left on device$" "$T/err"; then
		ok "$label > /dev/full: one message naming standard output"
	else notok "$label > /dev/full: exit $rc"; sed 's/^/  /' "$T/err"; fi
	$name $good -o /dev/full 2>"$T/err"; rc=$?
	if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^${name%% *}: write error on /dev/full: No space left on device$" "$T/err"; then
		ok "$label -o /dev/full: one message naming /dev/full"
	else notok "$label -o /dev/full: exit $rc"; sed 's/^/  /' "$T/err"; fi
done <<LIST
pfold|$T/in.perf
pfold -b|$T/in.perf
pfilter -v idle|$T/in.sp
pdiff --roots=keep $T/other.folded|$T/in.perf
pmerge|$T/in.sp
preport|$T/in.sp
pspeedscope|$T/in.sp
ptimeline|$T/in.sp
psvg|$T/in.perf
LIST
# a symlink stays a symlink; the file it points to gets the output
printf 'old\n' > "$T/target"
ln -s "$T/target" "$T/link"
pfold "$T/in.perf" -o "$T/link" 2>"$T/err"
if [ -L "$T/link" ] && grep -q 'worker' "$T/target"; then ok "-o through a symlink writes its target and keeps the link"
else notok "-o through a symlink"; ls -l "$T/link" "$T/target" | sed 's/^/  /'; fi
# a new file gets 0666 & ~umask, as with a plain open
(umask 027; pfold "$T/in.perf" -o "$T/new.folded")
m=$(stat -c %a "$T/new.folded")
[ "$m" = 640 ] && ok "a new -o file has 0666 & ~umask" || notok "a new -o file has mode $m (umask 027)"
# killed by SIGTERM: the old file is untouched, the temporary removed
printf 'precious\n' > "$T/d/keep"
mkfifo "$T/fifo"
( pfold "$T/fifo" -o "$T/d/keep" 2>/dev/null & echo $! > "$T/pid"; wait ) &
exec 3>"$T/fifo"
sleep 0.3
kill -TERM "$(cat "$T/pid")"; exec 3>&-; wait
if [ "$(cat "$T/d/keep")" = precious ] && [ "$(ls -A "$T/d" | wc -l)" = 1 ]; then ok "SIGTERM: old -o file kept, no temporary left"
else notok "SIGTERM: $(ls -A "$T/d")"; fi
