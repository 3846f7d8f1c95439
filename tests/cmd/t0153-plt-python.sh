#!/bin/bash
# PLT stubs are named as perf names them ("PyUnicode_New@plt"), never after
# the zero-sized _init before .plt (perf loads no symbol of a section whose
# name lacks "text": _init is in .init), by one symbol look-up for every
# path: a pyenv CPython 3.12 (shared libpython, ~1,400 PLT entries) running
# stdlib work (tests/progs/t015-stdlib.py: json, zlib, re), recorded by perf record with frame pointers
# and with DWARF, folded by pfold perf.data against perf script | pfold on
# the same perf.data; and pcollect's own recordings (dwarf, fp) of it.
# Before the fix: 27 stacks of the DWARF recording ended in "_init" where
# perf script has "...@plt", and the fp recording's "python3.12;_init".
. "$(dirname "$0")/../lib.sh"

PYROOT=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
PY=
for v in 3.12 3.13 3.11 3.10; do
	p=$(ls -d "$PYROOT"/versions/$v.*/bin/python3 2>/dev/null | sort -V | tail -1)
	if [ -n "$p" ] && ldd "$p" 2>/dev/null | grep -q libpython; then PY=$p; break; fi
done
[ -n "$PY" ] || { skip "PLT stubs" "no pyenv CPython 3.10-3.13 with a shared libpython in $PYROOT/versions"; exit 0; }
# plt FILE: the stacks whose leaf is a PLT stub, "NAME@plt COUNT" summed
plt() { awk '{ n = split($1, f, ";"); if (f[n] ~ /@plt$/) c[f[n]] += $NF } END { for (k in c) print k, c[k] }' "$1" | sort; }
noinit() {
	if grep -qE '(;|^)_init( |;)' "$2"; then notok "$1: no frame named _init"; grep -E '(;|^)_init( |;)' "$2" | head -3 | cut -c1-200 | sed 's/^/  /'
	else ok "$1: no frame named _init"; fi
}

# perf's recordings and perf script's text of them do not depend on the
# commands under test: under tests/run.sh they are made once per make check
# into SP_SHARE (the plain pass) and read again by the ASan pass (until
# session 11 each pass made them: two 1.5 s runs and a DWARF perf script).
P=$T
[ -n "${SP_SHARE:-}" ] && P=$SP_SHARE/t0153 && mkdir -p "$P"
if ! command -v perf > /dev/null; then skip "perf.data" "perf is not installed"
elif ! [ -s "$P/dw.txt" ] && ! perf record -e cpu-clock -F 999 -g -o "$P/fp.data" -- "$PY" "$SP_TOP/tests/progs/t015-stdlib.py" 1.5 > /dev/null 2> "$T/rec.err"; then
	skip "perf.data" "perf record is not permitted here: $(tail -1 "$T/rec.err")"
else
	if ! [ -s "$P/dw.txt" ]; then
		perf record -e cpu-clock -F 999 --call-graph dwarf -o "$P/dw.data" -- "$PY" "$SP_TOP/tests/progs/t015-stdlib.py" 1.5 > /dev/null 2>&1
		perf script -i "$P/fp.data" > "$P/fp.txt" 2> /dev/null
		perf script -i "$P/dw.data" > "$P/dw.tmp" 2> /dev/null && mv "$P/dw.tmp" "$P/dw.txt"
	fi
	for m in fp dw; do
		pfold "$P/$m.txt" 2> /dev/null | sort > "$T/$m.want"
		pfold "$P/$m.data" 2> "$T/$m.err" | sort > "$T/$m.got"
		plt "$T/$m.want" > "$T/$m.pw"; plt "$T/$m.got" > "$T/$m.pg"
		if [ ! -s "$T/$m.pw" ]; then
			skip "$m: PLT stubs" "perf script shows no sample in a PLT stub ($(wc -l < "$T/$m.want") stacks)"
		else
			expect_eq "$m: the $(wc -l < "$T/$m.pw") PLT stubs sampled, named and counted as perf script names them" "$T/$m.pw" "$T/$m.pg"
		fi
		noinit "pfold $m.data" "$T/$m.got"
	done
	# Frame pointers: the whole profile as perf script | pfold.
	expect_eq "fp: pfold perf.data = perf script | pfold ($(wc -l < "$T/fp.want") stacks)" "$T/fp.want" "$T/fp.got"
fi

# pcollect's own recordings of the same program (-F 999: ~1,500 samples,
# of which perf's recordings put 1-3 % in PLT stubs): stubs named NAME@plt.
. "$SP_TOP/tests/cmd/t6-lib.sh"
t6_probe || exit 0
for cg in dwarf fp; do
	pcollect -q -F 999 --python=off --call-graph $cg -o "$T/$cg.sp" -- "$PY" "$SP_TOP/tests/progs/t015-stdlib.py" 1.5 > /dev/null 2> "$T/$cg.perr"; rc=$?
	expect_rc "pcollect --call-graph $cg -- python: exit 0" 0 $rc
	pfold "$T/$cg.sp" > "$T/$cg.folded" 2>> "$T/$cg.perr"
	noinit "pcollect --call-graph $cg" "$T/$cg.folded"
	n=$(grep -cE '@plt( |;)' "$T/$cg.folded")
	if [ "$n" -gt 0 ]; then ok "pcollect --call-graph $cg: $n stacks through a NAME@plt stub"
	else notok "pcollect --call-graph $cg: no NAME@plt stub in $(wc -l < "$T/$cg.folded") stacks"; fi
done
