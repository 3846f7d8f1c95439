#!/bin/bash
# make install / uninstall honour PREFIX and DESTDIR.
. "$(dirname "$0")/../lib.sh"
if [ -n "$SP_LABEL" ]; then exit 0; fi # once is enough (not under the asan pass)
make -s -C "$SP_TOP" install DESTDIR="$T/root" PREFIX=/opt/sp > "$T/log" 2>&1
if [ -x "$T/root/opt/sp/bin/pfold" ] && [ -f "$T/root/opt/sp/share/man/man1/pfold.1" ] &&
   [ -f "$T/root/opt/sp/share/man/man5/stackpipe-stream.5" ]; then
	ok "make install puts commands and man pages under DESTDIR/PREFIX"
else notok "make install"; sed 's/^/  /' "$T/log" | tail -5; fi
"$T/root/opt/sp/bin/pfold" --help > /dev/null 2>&1 && ok "the installed pfold runs" || notok "installed pfold does not run"
make -s -C "$SP_TOP" uninstall DESTDIR="$T/root" PREFIX=/opt/sp > "$T/log" 2>&1
n=$(find "$T/root" -type f | wc -l)
if [ "$n" = 0 ]; then ok "make uninstall removes what install put there"; else notok "uninstall left $n files"; fi
