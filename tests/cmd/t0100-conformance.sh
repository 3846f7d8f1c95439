#!/bin/bash
# pfold against the peers' published fixtures (../shared/conformance): every
# perf-* case with an expected.folded must match byte for byte; the
# expect-only cases must show the behaviour their peer asserts.
. "$(dirname "$0")/../lib.sh"

if [ ! -d "$CONF" ]; then
	skip conformance "fixtures not found at $CONF (set SP_CONFORMANCE)"
	exit 0
fi

# Deliberate differences: case -> the case whose expectation we meet instead.
# Like inferno, pfold repairs the Rust names perf leaves half-demangled
# (_$LT$..$GT$::h0123.. -> <..>, $u7b$ -> {); FlameGraph keeps perf's text
# (issue 11).  For FlameGraph's cases we meet inferno's expectation for the
# same options; FlameGraph's no-option case is inferno's --pid one without
# the "-?" of the root frame (the two differ in nothing else).
declare -A differs=(
	[flamegraph/perf-rust-Yamakaky-dcpu--addrs]=inferno/perf-rust-Yamakaky-dcpu--addrs
	[flamegraph/perf-rust-Yamakaky-dcpu--all]=inferno/perf-rust-Yamakaky-dcpu--all
	[flamegraph/perf-rust-Yamakaky-dcpu--jit]=inferno/perf-rust-Yamakaky-dcpu--jit
	[flamegraph/perf-rust-Yamakaky-dcpu--kernel]=inferno/perf-rust-Yamakaky-dcpu--kernel
	[flamegraph/perf-rust-Yamakaky-dcpu--pid]=inferno/perf-rust-Yamakaky-dcpu--pid
	[flamegraph/perf-rust-Yamakaky-dcpu--tid]=inferno/perf-rust-Yamakaky-dcpu--tid
	[flamegraph/perf-rust-Yamakaky-dcpu]=inferno/perf-rust-Yamakaky-dcpu--pid
)

for d in "$CONF"/*/perf-* "$CONF"/*/guess-*; do
	[ -d "$d" ] || continue
	case_name=${d#$CONF/}
	in=$d/input.txt
	[ -f "$in" ] || in=$d/input.txt.gz
	args=()
	[ -s "$d/args" ] && mapfile -t args < "$d/args"
	(cd "$d" && pfold "${args[@]}" "$in") > "$T/out" 2> "$T/err"
	rc=$?
	if [ ! -s "$in" ]; then
		# Deliberate difference: the peers print nothing and exit 0 for
		# an empty input; an empty input is an error here (README).
		if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q 'empty input (0 bytes)' "$T/err"; then
			ok "conformance $case_name (deliberately: an empty input is an error, not an empty profile)"
		else notok "conformance $case_name (exit $rc, want 2: empty input)"; head -3 "$T/err" | sed 's/^/  /'; fi
	elif [ -f "$d/expected.folded" ]; then
		want=$d/expected.folded
		note=
		if [ -n "${differs[$case_name]:-}" ]; then
			want=$CONF/${differs[$case_name]}/expected.folded
			note=" (deliberately as ${differs[$case_name]}: inferno's Rust repair)"
			if [ "$case_name" = flamegraph/perf-rust-Yamakaky-dcpu ]; then
				sed 's/^emulator-?;/emulator;/' "$want" > "$T/want"; want=$T/want
			fi
		fi
		if [ $rc = 0 ] && cmp -s "$want" "$T/out"; then
			ok "conformance $case_name$note"
		else
			notok "conformance $case_name$note (exit $rc)"
			diff -u "$want" "$T/out" | head -8 | sed 's/^/  /'
			head -3 "$T/err" | sed 's/^/  /'
		fi
	elif [ -f "$d/expect" ]; then
		status=$(sed -n 's/^status=//p' "$d/expect")
		if grep -q '^error=' "$d/expect"; then
			# The peer refuses the input: we must exit 2, print nothing on
			# stdout and one clear error.
			if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q '^pfold: .*cannot tell the input format' "$T/err"; then
				ok "conformance $case_name (refused with a clear error)"
			else
				notok "conformance $case_name (exit $rc, want 2 with an error)"; head -3 "$T/err" | sed 's/^/  /'
			fi
		elif grep -q '^warn' "$d/expect"; then
			want_n=$(sed -n 's/^warn-count=//p' "$d/expect")
			got_n=$(grep -c '^pfold: [^ ]*:[0-9]*: ' "$T/err")
			if [ $rc = 0 ] && [ "$got_n" = "${want_n:-1}" ] && grep -q "bad line" "$T/err"; then
				ok "conformance $case_name ($got_n warning naming FILE:LINE, summary printed)"
			else
				notok "conformance $case_name (exit $rc, $got_n warnings, want ${want_n:-1})"; sed 's/^/  /' "$T/err" | head -5
			fi
		else
			skip "conformance $case_name" "expect file without an error/warn key: nothing to assert"
		fi
	fi
done
