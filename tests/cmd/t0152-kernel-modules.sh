#!/bin/bash
# pfold --kernel marks kernel-module frames (/lib/modules/.../*.ko) _[k], as
# inferno does: its fixture versioned-vmlinux (tests/data/inferno-versioned-
# vmlinux.txt, data copied from jonhoo/inferno 0.12.8's tests/data/collapse-
# perf, CDDL-1.0, with its expected collapse-perf --kernel output) has
# mlx5_core.ko frames under a vmlinux-VERSION image.  inferno's expected
# count is 1 (it counts the sample): pfold gives its period unless
# --weight=count.  The same case in ../shared/conformance is checked too
# when it is there.
. "$(dirname "$0")/../lib.sh"

D="$SP_TOP/tests/data"
pfold --kernel --weight=count "$D/inferno-versioned-vmlinux.txt" > "$T/out" 2> "$T/err"; rc=$?
expect_rc "pfold --kernel on versioned-vmlinux: exit 0" 0 $rc
expect_eq "... equals inferno's expected output (mlx5e_napi_poll_[k])" "$D/inferno-versioned-vmlinux.kernel.folded" "$T/out"
c="$CONF/inferno/perf-versioned-vmlinux"
if [ -f "$c/expected.folded" ]; then
	mapfile -t args < "$c/args"
	in=$(ls "$c"/input.txt* | head -1)
	(cd "$c" && pfold "${args[@]}" --weight=count "$in") > "$T/c.out" 2> "$T/c.err"
	expect_eq "conformance inferno/perf-versioned-vmlinux" "$c/expected.folded" "$T/c.out"
else
	skip "conformance inferno/perf-versioned-vmlinux" "not in $CONF (the copy in tests/data was checked)"
fi
# Without --kernel nothing is marked.
if grep -q '_\[k\]' <(pfold "$D/inferno-versioned-vmlinux.txt"); then notok "without --kernel: no _[k]"
else ok "without --kernel: no _[k]"; fi
# Compressed modules and perf's [module] names are kernel frames too; a
# library whose name holds "ko" is not.
cat > "$T/m.txt" <<'EOT'
prog  1 [000] 1.000000:          1 cpu-clock:
	ffffffffc0001000 xfs_file_read_iter+0x10 (/lib/modules/6.1.0-26-amd64/kernel/fs/xfs/xfs.ko.xz)
	ffffffffc0002000 nvme_queue_rq+0x10 ([nvme])
	7f0000001000 koala_eat+0x10 (/usr/lib/x86_64-linux-gnu/libkoala.so.1)
	7f0000002000 main+0x10 (/usr/bin/prog)

EOT
printf 'prog;main;koala_eat;nvme_queue_rq_[k];xfs_file_read_iter_[k] 1\n' > "$T/m.want"
pfold --kernel "$T/m.txt" > "$T/m.out" 2> "$T/m.err"
expect_eq "a .ko.xz module and [nvme] are kernel, libkoala.so is not" "$T/m.want" "$T/m.out"
