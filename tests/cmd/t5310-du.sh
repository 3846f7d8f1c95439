#!/bin/bash
# Disk usage (formats/du.c): `find DIR -printf '%s %p\n'` of a tree made
# here, folded by path component.  The bytes add up to `du -sb` (apparent
# sizes, files and directories), each file's stack is its path, names with
# spaces keep them, bad lines are named (FILE:LINE) and counted.
. "$(dirname "$0")/../lib.sh"
R=$T/tree
mkdir -p "$R/src/lib" "$R/docs/big files" "$R/empty"
head -c 300000 /dev/zero > "$R/src/lib/a.o"
head -c 100000 /dev/zero > "$R/src/lib/b.o"
head -c 12345 /dev/zero > "$R/src/main.c"
head -c 700000 /dev/zero > "$R/docs/big files/manual v2.pdf"
: > "$R/empty/.keep"
(cd "$T" && find tree -printf '%s %p\n') > "$T/du.txt"
pfold "$T/du.txt" > "$T/f" 2> "$T/e"; rc=$?
expect_rc "find -printf output is detected and read" 0 $rc
sum=$(awk '{s+=$NF} END {print s}' "$T/f")
want=$(du -sb "$R" | cut -f1)
if [ "$sum" = "$want" ]; then ok "bytes add up to du -sb ($want)"; else notok "folded total $sum, du -sb $want"; fi
expect_grep "a file's stack is its path" '^tree;src;lib;a\.o 300000$' "$T/f"
expect_grep "names with spaces are kept" '^tree;docs;big files;manual v2\.pdf 700000$' "$T/f"
dirsz=$(stat -c %s "$R/src")
expect_grep "a directory's own size is its self weight" "^tree;src $dirsz\$" "$T/f"
pfold -b "$T/du.txt" > "$T/b.sp" && sp-dump "$T/b.sp" > "$T/d" 2>&1
expect_grep "one value column: bytes" '^values bytes$' "$T/d"
expect_grep "its unit: bytes" '^units bytes$' "$T/d"
preport --sort=total "$T/du.txt" > "$T/r" 2>&1
expect_grep "preport: totals per directory in bytes" 'bytes' "$T/r"
psvg --colors=mem --title="disk usage" "$T/du.txt" > "$T/s.svg" 2> "$T/e"; rc=$?
expect_rc "psvg draws it" 0 $rc
expect_grep "psvg: the pdf is in the picture" 'manual v2\.pdf' "$T/s.svg"
# absolute paths start at /
find "$R/src" -printf '%s %p\n' | pfold -f du > "$T/abs" 2> "$T/e"
expect_grep "absolute paths root at /" "^/;.*;tree;src;lib;b\.o 100000\$" "$T/abs"
# bad lines: named and counted, the rest read
printf '10 ./a/x\nnot a size ./b\n20 ./a/y\n' > "$T/bad.txt"
pfold -f du "$T/bad.txt" > "$T/bf" 2> "$T/e"; rc=$?
expect_grep "a bad line is named with FILE:LINE" 'bad\.txt:2: expected "BYTES PATH"' "$T/e"
expect_grep "... and counted" '1 bad line skipped' "$T/e"
if [ "$(awk '{s+=$NF} END {print s}' "$T/bf")" = 30 ]; then ok "the good lines are read (30 bytes)"; else notok "good lines"; cat "$T/bf"; fi
