#!/bin/bash
# plive L on real programs nobody here wrote: xz compressing random data,
# the selected function lzma_code (in Debian's liblzma, built without
# DWARF line tables): the status line says why there are no lines, and no
# probe starts; the view runs on.  A row that is not a function ([module])
# is said so too.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
. "$SP_TOP/tests/cmd/t8-lib.sh"

if ! command -v tmux > /dev/null; then skip "plive L xz" "tmux is not installed (make deps installs it)"; exit 0; fi
if ! command -v xz > /dev/null; then skip "plive L xz" "xz is not installed"; exit 0; fi
t6_probe || exit 0
lib=$(ldd "$(command -v xz)" | awk '/liblzma/ { print $3 }')
lib=$(readlink -f "$lib")
if [ -z "$lib" ] || [ -n "$(objdump --dwarf=decodedline "$lib" 2>/dev/null | grep -m1 -E '0x[0-9a-f]+ ')" ]; then
	skip "plive L xz" "liblzma ($lib) has a DWARF line table here (the test wants one without)"; exit 0; fi
head -c 100000000 /dev/urandom > "$T/data"
t6_spawn "$T/xz.out" sh -c 'echo ready; exec xz -T1 -6 -c "$0" > /dev/null' "$T/data" || { notok "xz did not start"; exit 0; }
t8_tmux t8082
$TM new-session -d -s t8082 -x 250 -y 30 "$SP_BIN/plive --window 5 -p $TPID 2> $T/plive.err; echo \$? > $T/rc; sleep 60"
if wait_for 30 'grep -qE " lzma_code$" "$T/cap"'; then ok "plive -p xz: lzma_code in the table"; else
	notok "plive -p xz: lzma_code in the table"; sed 's/^/  /' "$T/cap" | head -12; exit 0; fi
$TM send-keys -t t8082 / '^lzma_code$' Enter
wait_for 10 'grep -q "Filter: /^lzma_code\$/" "$T/cap"'
$TM send-keys -t t8082 L
if wait_for 20 'grep -qF "L: $lib:lzma_code: $lib has no DWARF line table (build it with -g)" "$T/cap"'; then
	ok "L on liblzma's lzma_code: no DWARF line table, said"; else notok "L on lzma_code: the reason said"; sed -n 3p "$T/cap" | sed 's/^/  /'; fi
if ! pgrep -f -- "-p $TPID --trace=" > /dev/null; then ok "no probe started"; else notok "no probe started"; fi
$TM send-keys -t t8082 / '^\[' Enter
wait_for 10 'grep -q "Filter: /^\\\\\[/" "$T/cap"'
$TM send-keys -t t8082 L
if wait_for 10 'grep -q "^L: \[.*\] is not a function pcollect --trace can probe" "$T/cap"'; then ok "L on a [module] row: not a function, said"; else
	notok "L on a [module] row"; sed -n 1,6p "$T/cap" | sed 's/^/  /'; fi
$TM send-keys -t t8082 q
for _ in $(seq 300); do [ -s "$T/rc" ] && break; sleep 0.1; done
expect_rc "q: exit 0" 0 "$(cat "$T/rc" 2>/dev/null)"
