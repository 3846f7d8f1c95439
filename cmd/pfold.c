/* pfold — fold stack samples (perf script, folded, py-spy, binary stream)
 * into folded stacks or the binary stream. */
#include <errno.h>
#include <malloc.h>
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "fold.h"
#include "heap.h"
#include "format.h"
#include "inline.h"
#include "perf_script.h"
#include "perf_script_jobs.h"
#include "pprof.h"
#include "stream.h"

static const char synopsis[] =
	"usage: pfold [options] [FILE...]\n"
	"Fold stack samples into folded stacks (\"root;...;leaf COUNT\") or the binary stream.\n"
	"Inputs (auto-detected, gzip ok, '-' or none = stdin): perf script text, folded\n"
	"stacks (one or two values), py-spy raw output, speedscope JSON, perf.data (perf\n"
	"record's file, file or pipe mode), pprof, cProfile/pstats files, the stackpipe\n"
	"binary stream.\n"
	"\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"  -O, --output-format=F   folded (default); stream: the binary stream, which keeps\n"
	"                          threads, times, events and periods; pprof: gzipped\n"
	"                          profile.proto for go tool pprof and profiling services\n"
	"  -b, --binary            the same as -O stream\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"      --pid               root frame is comm-PID\n"
	"      --tid               root frame is comm-PID/TID\n"
	"      --threads           every thread name its own root frame (by default\n"
	"                          numbered names are grouped: Thread-N, worker-N)\n"
	"      --no-comm           no comm root frame\n"
	"      --kernel            mark kernel frames with _[k]\n"
	"      --jit               mark JIT frames with _[j]\n"
	"      --all               --kernel and --jit\n"
	"      --addrs             put the raw address into [unknown] frames\n"
	"      --event-filter=EV   keep samples of event EV only (default: the first event seen)\n"
	"      --inline            expand inlined frames from DWARF (libdw), in-process\n"
	"      --value=V           the value column to print, by name or index (a stream's\n"
	"                          calls, bytes...; pprof input: the sample type to read,\n"
	"                          by default the profile's default, its last); one the\n"
	"                          input lacks is an error naming its columns\n"
	"      --lines             frames \"func (file:line)\" when the input has source lines\n"
	"      --weight=NAME       the value column folded output prints: period (the default\n"
	"                          when present, else the first), samples (or count), any\n"
	"                          column of the input; the binary stream keeps them all\n"
	"  -j, --jobs=N            threads folding perf script text, from a file or a pipe\n"
	"                          (default: CPUs; the output does not depend on N)\n"
	"  -q, --quiet             do not print each bad line (the summary is still printed)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok (bad lines are reported and skipped), 2 error (also a perf.data\n"
	"cut short: the samples before the cut are written).\n";

struct opts {
	const char *format;
	enum sp_output kind; /* -O: folded (the default), stream or pprof */
	const char *output;
	struct sp_fold_opts fold;
	struct sp_read_opts read;
	const char *event_filter;
	int do_inline;
	int lines;
	unsigned long jobs;
	int quiet;
	struct sp_warnings warn; /* line warnings: counted, -q drops them */
};

static int cmd_pfold(int argc, char **argv)
{
	enum { O_PID = 256, O_TID, O_THREADS, O_NOCOMM, O_KERNEL, O_JIT, O_ALL, O_ADDRS, O_EVENT, O_INLINE, O_WEIGHT, O_VALUE, O_LINES };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "binary", no_argument, NULL, 'b' },
		{ "output-format", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", no_argument, NULL, O_PID },
		{ "tid", no_argument, NULL, O_TID },
		{ "threads", no_argument, NULL, O_THREADS },
		{ "no-comm", no_argument, NULL, O_NOCOMM },
		{ "kernel", no_argument, NULL, O_KERNEL },
		{ "jit", no_argument, NULL, O_JIT },
		{ "all", no_argument, NULL, O_ALL },
		{ "addrs", no_argument, NULL, O_ADDRS },
		{ "event-filter", required_argument, NULL, O_EVENT },
		{ "inline", no_argument, NULL, O_INLINE },
		{ "lines", no_argument, NULL, O_LINES },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "value", required_argument, NULL, O_VALUE },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	memset(&o, 0, sizeof o);
	o.fold.label = SP_LABEL_COMM;
	o.kind = SP_OUT_FOLDED;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	o.jobs = ncpu > 0 ? (unsigned long)ncpu : 1;
	int c;
	while ((c = getopt_long(argc, argv, "f:bO:o:j:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &o.format) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'b': o.kind = SP_OUT_BINARY; break;
		case 'O':
			if (sp_opt_output(synopsis, optarg, 1, &o.kind) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'o': o.output = optarg; break;
		case O_PID: if (o.fold.label != SP_LABEL_TID) o.fold.label = SP_LABEL_PID; break;
		case O_TID: o.fold.label = SP_LABEL_TID; break;
		case O_THREADS: o.fold.each_thread = 1; break;
		case O_NOCOMM: o.fold.label = SP_LABEL_NONE; break;
		case O_KERNEL: o.fold.annotate_kernel = 1; break;
		case O_JIT: o.fold.annotate_jit = 1; break;
		case O_ALL: o.fold.annotate_kernel = o.fold.annotate_jit = 1; break;
		case O_ADDRS: o.read.addrs = 1; break;
		case O_EVENT: o.event_filter = optarg; break;
		case O_VALUE: o.read.value = optarg; break;
		case O_INLINE: o.do_inline = o.read.inline_frames = 1; break;
		case O_LINES: o.lines = 1; break;
		case O_WEIGHT: o.fold.weight = optarg; break;
		case 'j':
			if (sp_opt_uint("--jobs", optarg, &o.jobs) < 0)
				return SP_EXIT_ERROR;
			if (o.jobs < 1)
				o.jobs = 1;
			if (o.jobs > 64)
				o.jobs = 64;
			break;
		case 'q': o.quiet = 1; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: o.read.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	o.warn.quiet = o.quiet;
	o.read.warn = sp_print_warning;
	o.read.warn_ctx = &o.warn;
	o.read.event_filter = o.event_filter;
	o.read.no_time = o.kind == SP_OUT_FOLDED; /* folded text has no times */

	if (o.kind != SP_OUT_FOLDED && !o.output && sp_check_binary_stdout(stdout) < 0)
		return SP_EXIT_ERROR;
	struct sp_outfile of;
	if (sp_outfile_open(&of, o.output, SP_OUT_SIGNALS) < 0)
		return SP_EXIT_ERROR;
	FILE *out = of.f;

	int nfiles = argc - optind;
	char *stdin_only[] = { "-" };
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	/* The tables (frames, stacks, caches) in 2 MiB pages where the kernel
	 * has them: fewer page faults and TLB misses on their random probes
	 * (3-4% of pfold's CPU time on the fresh data of issue 13).  perf
	 * script text folds into some 0.15 bytes of tables per input byte; the
	 * workers allocate from the main heap too (one malloc arena), so that
	 * the advice covers theirs. */
	size_t insize = sp_heap_input_bytes(files, nfiles, (size_t)256 << 20) / 4; /* a pipe: 64 MB */
#ifdef M_ARENA_MAX /* glibc */
	if (o.jobs > 1)
		mallopt(M_ARENA_MAX, 1);
#endif
	sp_heap_prepare(insize);

	struct sp_profile *p = sp_profile_new();
	struct sp_writer *wr = sp_writer_open(o.kind, out, p, &o.fold, 0, NULL);
	struct sp_fold *fold = sp_writer_fold(wr);
	struct sp_sink *sink = sp_writer_sink(wr);
	struct sp_inline *inl = NULL;
	if (fold) {
		sp_fold_set_value(fold, o.read.value); /* streams and text too: the column printed */
		sp_fold_set_lines(fold, o.lines);
	}
	if (o.do_inline) {
		inl = sp_inline_new(p, sink);
		sink = sp_inline_sink(inl);
	}

	int rc = SP_EXIT_OK;
	struct sp_err err;
	/* SP_PFOLD_CHUNK: the parallel path's chunk size in bytes (tests
	 * make it small to cut even a small input into many chunks) */
	size_t chunk = 0;
	const char *ck = getenv("SP_PFOLD_CHUNK");
	if (ck && *ck)
		chunk = (size_t)strtoull(ck, NULL, 10);
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++) {
		/* perf script text folded to text (a file or a pipe): cut into
		 * chunks of whole samples, folded by -j threads.  Everything
		 * else: one pass through the readers. */
		struct sp_input *in = sp_input_open(files[i], &err);
		const struct sp_format *fmt = NULL;
		if (in && fold && !inl && o.jobs > 1 && (!o.format || !strcmp(o.format, "perf")) &&
		    sp_input_check_empty(in, &err) == 0 && (fmt = o.format ? &sp_format_perf : sp_format_probe(in)) == &sp_format_perf) {
			struct sp_perf_par_opts po = { (unsigned)o.jobs, chunk, &o.fold, o.lines };
			if (sp_perf_fold_parallel(in, &po, p, fold, &o.read, &err) < 0) {
				sp_outfile_error(&of, &err);
				rc = SP_EXIT_ERROR;
			}
			sp_input_close(in);
			continue;
		}
		if (!in || sp_read_input(in, o.format, p, sink, &o.read, NULL, &err) < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
		sp_input_close(in);
	}
	if (rc == SP_EXIT_OK && inl && sp_inline_finish(inl, &err) < 0) {
		sp_error_e(&err);
		rc = SP_EXIT_ERROR;
	}
	if (rc == SP_EXIT_OK) {
		if (sp_writer_finish(wr, &err) < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
	}
	sp_print_bad_lines(&o.read);
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	sp_inline_free(inl);
	sp_writer_free(wr);
	sp_profile_free(p);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pfold", cmd_pfold, argc, argv); }
