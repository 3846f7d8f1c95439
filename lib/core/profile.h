/* profile.h — the data model every reader fills and every writer reads.
 *
 * A profile owns interning tables: strings, frames, stack nodes and
 * threads, each addressed by a dense 32-bit id.  Id 0 is reserved in every
 * table: string 0 is "" (absent), node 0 is the empty stack, thread 0 is "no
 * thread".  Ids only grow, so a writer that streams definitions remembers the
 * highest id it has written and emits what is newer (see stream.h).
 *
 * Readers push samples into a struct sp_sink (callbacks, in the spirit of
 * perf's struct perf_tool); the sample points at ids of the profile it was
 * read into.  Pointers returned by the getters stay valid until the profile
 * is freed (tables are arenas or arrays that are not shrunk; frame/node/
 * thread pointers may move when the table grows, so do not hold them across
 * interning calls).
 */
#ifndef SP_PROFILE_H
#define SP_PROFILE_H

#include "util.h"

enum sp_kind {
	SP_KIND_NATIVE = 0,
	SP_KIND_KERNEL = 1,
	SP_KIND_JIT = 2,
	SP_KIND_INLINED = 3,
	SP_KIND_PYTHON = 4,
	SP_KIND_SYNTHETIC = 5, /* made up by a tool: comm roots, "[futex wait]" */
	SP_KIND_MAX
};
const char *sp_kind_name(unsigned kind);
int sp_kind_parse(const char *s, size_t n); /* -1 when unknown */

struct sp_frame {
	uint32_t name;   /* string id */
	uint32_t module; /* string id, 0 = unknown */
	uint32_t file;   /* string id, 0 = unknown */
	uint32_t line;   /* 0 = unknown */
	uint64_t addr;   /* 0 = unknown */
	uint8_t kind;    /* enum sp_kind */
};

struct sp_node {
	uint32_t parent; /* node id, 0 = root */
	uint32_t frame;  /* frame id */
	uint32_t depth;  /* number of frames from the root, node 0 has 0 */
};

struct sp_thread {
	int64_t pid; /* -1 when unknown */
	int64_t tid; /* -1 when unknown */
	uint32_t name; /* string id (comm) */
};

#define SP_MAX_VALUES 8
#define SP_NO_TIME UINT64_MAX

struct sp_sample {
	uint32_t stack;  /* node id of the leaf; 0 = empty stack */
	uint32_t thread; /* thread id, 0 = none */
	uint32_t event;  /* string id of the event name, 0 = none */
	uint64_t time;   /* ns since an arbitrary epoch, SP_NO_TIME when unknown */
	double values[SP_MAX_VALUES]; /* profile->nvalues of them */
};

/* Trace events: exact entry/exit of a function on a thread (uprobes). */
enum sp_trace_kind { SP_TRACE_ENTRY = 0, SP_TRACE_EXIT = 1 };
/* flags: ABANDONED: an exit that no return probe saw — the frame was
 * skipped by longjmp or an exception, proven dead by a later event on its
 * thread (time: that event's); POINT: a point event (a probe inside a
 * function, an entry-only hit): no exit follows. */
enum { SP_TRACE_ABANDONED = 1, SP_TRACE_POINT = 2, SP_TRACE_FLAGS = 3 };
#define SP_TRACE_VALUES 6
struct sp_trace {
	uint32_t kind;   /* enum sp_trace_kind */
	uint32_t frame;  /* the function (frame id) */
	uint32_t thread;
	uint32_t stack;  /* stack at the event, 0 if not recorded */
	uint64_t time;
	uint64_t call;   /* the call's identity: entry and exit share it; 0 = unknown */
	uint32_t flags;
	uint32_t nvalues;                 /* recorded values (arg2, ret) */
	uint32_t vname[SP_TRACE_VALUES];  /* string ids: "arg2", "ret" */
	int64_t value[SP_TRACE_VALUES];
};

struct sp_meta {
	uint32_t key, value; /* string ids */
};

struct sp_profile;

struct sp_profile *sp_profile_new(void);
void sp_profile_free(struct sp_profile *p);

uint32_t sp_str_intern(struct sp_profile *p, const char *s, size_t n);
/* Intern with a precomputed sp_hash(s, n). */
uint32_t sp_str_intern_h(struct sp_profile *p, const char *s, size_t n, uint64_t h);
const char *sp_str(const struct sp_profile *p, uint32_t id);
size_t sp_str_len(const struct sp_profile *p, uint32_t id);
uint32_t sp_str_count(const struct sp_profile *p);

uint32_t sp_frame_intern(struct sp_profile *p, const struct sp_frame *f);
const struct sp_frame *sp_frame_get(const struct sp_profile *p, uint32_t id);
uint32_t sp_frame_count(const struct sp_profile *p);
/* Convenience: intern a frame with just a name and kind. */
uint32_t sp_frame_named(struct sp_profile *p, const char *name, size_t n, unsigned kind);

uint32_t sp_node_intern(struct sp_profile *p, uint32_t parent, uint32_t frame);
const struct sp_node *sp_node_get(const struct sp_profile *p, uint32_t id);
uint32_t sp_node_count(const struct sp_profile *p);
/* Free the index that sp_node_intern looks stacks up in (some 16 bytes a
 * node), for a command done reading that needs the memory for what comes
 * next; the next sp_node_intern builds it again.  Nothing else changes. */
void sp_profile_drop_node_index(struct sp_profile *p);
/* Hints, for a reader that knows what it will look up next: bring the
 * index slot of string hash h (sp_hash of the text), or of node (parent,
 * frame), into the cache.  Nothing changes. */
void sp_str_prefetch(const struct sp_profile *p, uint64_t h);
void sp_node_prefetch(const struct sp_profile *p, uint32_t parent, uint32_t frame);
/* Frames of a stack, root first, into out (grown as needed); returns depth. */
uint32_t sp_node_frames(const struct sp_profile *p, uint32_t node, uint32_t **out, size_t *cap);

uint32_t sp_thread_intern(struct sp_profile *p, int64_t pid, int64_t tid, uint32_t name);
const struct sp_thread *sp_thread_get(const struct sp_profile *p, uint32_t id);
uint32_t sp_thread_count(const struct sp_profile *p);

/* Value columns: names such as "samples", "period", "cpu-ns", or "a","b". */
int sp_profile_nvalues(const struct sp_profile *p);
const char *sp_profile_value_name(const struct sp_profile *p, int i);
void sp_profile_set_values(struct sp_profile *p, int n, const char *const *names);
/* The index of the value column named name, or -1. */
int sp_value_find(const struct sp_profile *p, const char *name);
/* The value column a command's option opt (--weight, --value) picks: the
 * column named name, for the alias "count" the "samples" column, else a
 * decimal index of the columns; name NULL: the default, "period" when
 * present, else the first column.  Returns its index, or -1 with err
 * "OPT=NAME: the input has no such value column (its columns: a, b)": the
 * one error every command gives for an unknown column. */
int sp_value_option(const struct sp_profile *p, const char *opt, const char *name, struct sp_err *err);
/* sp_value_option for --weight. */
int sp_value_column(const struct sp_profile *p, const char *name, struct sp_err *err);
/* Is p a difference of two profiles (pdiff's output): exactly the value
 * columns "a" and "b"? */
int sp_value_is_diff(const struct sp_profile *p);
/* The unit of value column i: "samples" (a count), "ns" (time), "bytes",
 * "events" (perf's period of a non-clock event), "" (unknown: the one value
 * of folded text, "value", and its differences "a" and "b") or what a
 * stream's header says.  Set by readers that know it (the stream's header,
 * pprof's sample types); otherwise inferred from the column's name and, for
 * perf's "period", from event (a string id, 0 = the profile's "event"
 * metadata). */
void sp_profile_set_unit(struct sp_profile *p, int i, const char *unit);
const char *sp_value_unit(const struct sp_profile *p, int i, uint32_t event);
/* 1 when column i's unit was set by a reader, 0 when it is inferred (perf
 * script text's "period": its unit is each sample's event's). */
int sp_profile_unit_set(const struct sp_profile *p, int i);
int sp_unit_is_time(const char *unit);
/* v in unit, as a person reads it: "14,014 samples", "14.01 ms", "2.31 s";
 * a bare "2,909,090,880" for the unknown unit "". */
void sp_buf_addvalue(struct sp_buf *b, double v, const char *unit);

/* Metadata key/value pairs, in the order added; a key set twice keeps both. */
void sp_meta_add(struct sp_profile *p, const char *key, const char *value);
size_t sp_meta_count(const struct sp_profile *p);
const struct sp_meta *sp_meta_get(const struct sp_profile *p, size_t i);
const char *sp_meta_find(const struct sp_profile *p, const char *key); /* last value */

/* The consumer of a reader.  Any callback may be NULL.  A callback returns 0
 * to go on or -1 (with err filled) to stop the reader. */
struct sp_sink {
	int (*sample)(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp,
		      struct sp_err *err);
	int (*trace)(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t,
		     struct sp_err *err);
	/* Metadata or value names changed (called after sp_meta_add by readers). */
	int (*meta)(struct sp_sink *s, struct sp_profile *p, struct sp_err *err);
	/* A stream ended with a trailer (binary) or an input file ended. */
	int (*end_input)(struct sp_sink *s, struct sp_profile *p, struct sp_err *err);
};

#endif
