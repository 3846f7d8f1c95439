# Shared by the plive tests that drive a terminal (t80*): a private tmux
# server, its pane's text and a poll.  Source after tests/lib.sh.
# (Not a test: it only defines helpers; the runner runs it harmlessly.)
#   t8_tmux NAME          TM (the tmux command of a server of this test's
#                         own) and an EXIT trap that kills it and $TPID;
#                         the session the test makes is named NAME
#   cap                   the pane's text now, in $T/cap
#   wait_for SECONDS COND poll the pane until the shell condition holds
t8_tmux() {
	T8_SESSION=$1
	TM="tmux -L sp-$1-$$ -f /dev/null"
	trap '$TM kill-server 2>/dev/null; kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT
}
cap() { $TM capture-pane -p -t "$T8_SESSION" > "$T/cap" 2>/dev/null; }
wait_for() {
	local n=$(($1 * 10))
	for _ in $(seq "$n"); do
		cap
		if eval "$2"; then return 0; fi
		sleep 0.1
	done
	return 1
}
