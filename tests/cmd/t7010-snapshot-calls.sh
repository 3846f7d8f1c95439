#!/bin/bash
# pcollect --snapshot prints each blocked system call with its own
# arguments (issue 10, item 7): the path openat was given (read from the
# target while it was stopped), poll's number of fds and timeout, the
# timespec of nanosleep, the descriptors of epoll_wait/accept/recvfrom/
# select named, instead of six raw registers.  Threads of
# tests/progs/t7-calls.c, each blocked in one call.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/t6-lib.sh"

t6_build calls t7-calls.c -O2 -g -pthread || exit 0
mkfifo "$T/fifo"
if ! t6_start calls "$T/fifo"; then notok "t7-calls did not get ready"; exit 0; fi
trap 'kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT
# until every named thread sits in a system call (5 s)
for _ in $(seq 100); do
	n=0
	for t in /proc/"$TPID"/task/*; do
		case "$(cat "$t/syscall" 2>/dev/null)" in running|"") ;; *) n=$((n + 1)) ;; esac
	done
	[ "$n" -ge 8 ] && break
	sleep 0.05
done
pcollect --snapshot -p "$TPID" > "$T/snap" 2> "$T/err"; rc=$?
expect_rc "snapshot of t7-calls: exit 0" 0 $rc
line() { grep "^thread [0-9]* ($1) " "$T/snap"; }
check() { # NAME THREAD ERE
	if line "$2" | grep -qE -- "$3"; then ok "$1"; else notok "$1 (no match for /$3/)"; line "$2" | sed 's/^/  /'; fi
}
check "openat: the path read from the target, AT_FDCWD, flags by name" openat \
	"sleeping in openat\\(AT_FDCWD, \"$T/fifo\", O_RDONLY\\|O_CLOEXEC\\)\$"
check "poll: the number of fds and the timeout" poll 'sleeping in poll\(0x[0-9a-f]+, 3 fds, timeout=-1\)$'
check "epoll_wait: the epoll descriptor named, maxevents, timeout" epoll \
	'sleeping in epoll_wait\([0-9]+ = anon_inode:\[eventpoll\], 0x[0-9a-f]+, 16, timeout=-1\)$'
check "nanosleep: the timespec read from the target" nanosleep 'sleeping in nanosleep\(\{3600, 250000000\}, NULL\)$'
check "accept: the socket named" accept 'sleeping in accept\([0-9]+ = socket:\[[0-9]+\], NULL, NULL\)$'
check "recvfrom: the socket named, the buffer size" recvfrom \
	'sleeping in recvfrom\([0-9]+ = socket:\[[0-9]+\], 0x[0-9a-f]+, 512, 0, NULL, NULL\)$'
# glibc's select() is pselect6 with a timespec the kernel counts down
check "select: nfds and the time left, read from the target" select \
	'sleeping in (select\([0-9]+, 0x[0-9a-f]+, NULL, NULL, \{3600, 500\}\)|pselect6\([0-9]+, 0x[0-9a-f]+, NULL, NULL, \{3[0-9]{3}, [0-9]+\}, NULL\))$'
check "pause: no arguments" calls 'sleeping in pause\(\)$'
# the same, in the thread heads of a lock owner's chain: unchanged format elsewhere
if grep -qE '0x[0-9a-f]+, 0x[0-9a-f]+, 0x[0-9a-f]+, 0x[0-9a-f]+, 0x[0-9a-f]+, 0x[0-9a-f]+\)' "$T/snap"; then
	notok "no call printed as six raw registers"; grep -E '(0x[0-9a-f]+, ){5}' "$T/snap" | sed 's/^/  /'
else ok "no call printed as six raw registers"; fi
