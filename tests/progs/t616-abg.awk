# t616-abg.awk — reads `pfold --weight=count` of tests/progs/t616-abg.py and
# prints "alpha beta gamma wrong changed total": the shares (in %) of each
# Python function among the samples under one of them; wrong: samples with
# a native frame under the wrong function (the interpreter's long-integer
# code under gamma, zlib's under alpha or beta); changed: samples marked
# [python frame changed]; total: all samples.
{
	n = $NF; tot += n
	s = $0; sub(/ [0-9]+$/, "", s)
	if (s ~ /\[python frame changed\]/) ch += n
	m = split(s, f, ";"); fn = ""; k = 0
	for (i = 1; i <= m; i++)
		if (f[i] ~ /^(alpha|beta|gamma) \(/) { fn = substr(f[i], 1, index(f[i], " ") - 1); k = i }
	if (fn == "") next
	py[fn] += n
	rest = ""
	for (i = k + 1; i <= m; i++) rest = rest ";" f[i]
	if (fn == "gamma" && rest ~ /;(_PyLong_|x_add|x_sub|x_mul|k_mul|l_mod|long_mod|long_rem|x_divrem|long_add|long_mul|v_lshift|v_rshift)/) wrong += n
	if (fn != "gamma" && rest ~ /;(deflate|zlib_|compress2?;|fill_window|longest_match)/) wrong += n
}
END {
	t = py["alpha"] + py["beta"] + py["gamma"]
	if (!t) t = 1
	printf "%.1f %.1f %.1f %d %d %d\n", py["alpha"] * 100 / t, py["beta"] * 100 / t, py["gamma"] * 100 / t, wrong, ch, tot
}
