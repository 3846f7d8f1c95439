/* fleet.h — profiles of many hosts in ClickHouse (pfleet(1)): the schema,
 * writing any input into the store in time buckets and batches, and reading
 * a slice back as a stream aggregated by the server.
 *
 * The schema is share/fleet/schema.sql (compiled in as well).  A stack's id
 * is content-addressed: h(empty) = 0, h(stack + frame) = XXH3_64bits_withSeed
 * of the frame's name followed by one byte of its kind, seeded with h(stack);
 * every host computes the same id for the same frames.
 *
 * Batches are RowBinary INSERTs over sp_http, sent by a thread while put
 * reads on.  An input is stored whole or not at all: none of it is sent
 * before its end is read.  A sample batch carries its id (its rows' hash)
 * in every row: put asks whether it is stored before sending it and after
 * a lost answer, so neither a retry nor the same put run again duplicates;
 * the question and the insert are one step under a per-host flock, so two
 * puts of the same host at once do not either.
 * A batch the server cannot take now (down after the retries, a transient
 * ClickHouse error) is appended, deflated, to a spool file that
 * sp_fleet_flush sends later; one it refuses (an error of the request, a
 * server that is not ClickHouse) is an error, not spooled.
 */
#ifndef SP_FLEET_H
#define SP_FLEET_H

#include <stdio.h>

#include "format.h"
#include "http.h"

struct sp_fleet {
	struct sp_http_url url;
	char urltext[300];
	char db[64];
	const char *cluster; /* NULL: the shard's own tables; else the Distributed ones */
	int timeout_ms;
	int retries;         /* sends after the first that failed */
	double retry_delay;  /* seconds before the first retry, doubled each time */
	const char *spool;   /* spool file, NULL = none (a failed batch is an error) */
	unsigned long long spool_max; /* bytes the spool may hold (0: no bound) */
	struct sp_buf resp, q;
	/* SP_FLEET_FAULT=lose-answer:N (tests): the answer to the Nth sample
	 * batch is dropped as if the connection broke after the request. */
	long fault_lose;
	long nbatches;
	int schema_checked;  /* sp_fleet_check_schema found the store writable */
	char remade[64];     /* sp_fleet_init: the Distributed tables made again (an older schema's columns) */
	struct sp_buf migrate; /* an older schema's store: the statements that copy it over, one a line */
	int schema;          /* the store's schema (3, 2, 1; 0: no store): sp_fleet_check_schema */
};

/* The schema text (share/fleet/schema.sql) for database "stackpipe". */
extern const char sp_fleet_schema[];

int sp_fleet_open(struct sp_fleet *f, const char *url, const char *db, struct sp_err *err);
void sp_fleet_close(struct sp_fleet *f);
/* Runs one statement; the answer's body is left in f->resp.  A refusal is
 * returned as the server's sentence ("No such column x in table y").
 * Returns 0, or -1 with err filled. */
int sp_fleet_sql(struct sp_fleet *f, const char *sql, const void *body, size_t n, struct sp_err *err);

/* Creates the database and tables (idempotent); with cluster, the
 * Distributed tables over it too.  ttl_days > 0 sets the samples' TTL where
 * the server has TTL (19.6+); *no_ttl is set when it has not. */
int sp_fleet_init(struct sp_fleet *f, const char *cluster, unsigned ttl_days, int *no_ttl, struct sp_err *err);
/* Drops the days older than ttl_days (the TTL of servers without TTL).
 * *dropped gets the number of days dropped. */
int sp_fleet_prune(struct sp_fleet *f, unsigned ttl_days, unsigned *dropped, struct sp_err *err);
/* 0 when the store can be written by this pfleet (or has no samples table
 * yet, or the server does not answer: the spool keeps the batches), -1
 * with err naming what to do when it is of the first schema. */
int sp_fleet_check_schema(struct sp_fleet *f, struct sp_err *err);

struct sp_fleet_put_opts {
	const char *service;  /* NULL: the input's command, else its first thread's name */
	const char *host;     /* NULL: the input's "host" metadata, else this machine's name */
	const char *const *labels; /* "K=V" */
	int nlabels;
	unsigned bucket;      /* seconds, > 0 */
	size_t batch_rows;    /* rows per INSERT */
	int64_t start;        /* wall-clock seconds of the first sample; INT64_MIN = see pfleet(1) */
	const char *format;   /* input format, NULL = detect */
	struct sp_read_opts *read;
};
struct sp_fleet_stats {
	uint64_t samples;       /* samples read */
	uint64_t rows;          /* sample rows stored */
	uint64_t stacks;        /* stacks sent to the dictionary */
	uint64_t batches;       /* batches stored */
	uint64_t retried;       /* sends repeated after a failure */
	uint64_t landed;        /* retries that found the first attempt stored (not sent again) */
	uint64_t already;       /* put: sample batches found stored before sending (an earlier put of the same rows) */
	uint64_t already_rows;  /* ... their rows */
	uint64_t failed_inputs; /* put: inputs that failed (none of their rows stored) */
	uint64_t failed_samples; /* ... their samples read before the failure */
	uint64_t spooled_rows;  /* rows written to the spool */
	uint64_t spooled;       /* batches written to the spool */
	uint64_t unspooled;     /* spooled batches sent now */
	uint64_t unspooled_rows;
	uint64_t missing_stacks; /* get: stack ids absent from the dictionary */
	uint64_t dropped_zero;  /* put: values of 0 not stored */
	uint64_t rounded;       /* put: values not whole, stored rounded */
	uint64_t stacks_known;  /* put: stacks the dictionary had already (not sent) */
	uint64_t unlocked;      /* put: batches sent without the host's lock (its file could not be opened) */
	uint64_t rollup_rows;   /* put: hourly rollup rows stored (samples_hourly) */
	int rollup;             /* get: read from the hourly rollup */
	int rollup_stale;       /* get: the rollup's totals differ from the samples' (read from them) */
	char first_error[480];  /* the first send failure that led to spooling */
};

/* Sends what the spool holds (first), then reads every file (path "-" =
 * standard input) and stores each one's samples whole, or none of them when
 * it fails (the next files are still stored: st->failed_inputs).  Returns
 * 0 when everything is stored, 1 when some batches went to the spool (err
 * says why), -1 on an error of an input, of the spool or a refusal by the
 * server (err filled: the first). */
int sp_fleet_put(struct sp_fleet *f, const struct sp_fleet_put_opts *o, char **files, int nfiles,
		 struct sp_fleet_stats *st, struct sp_err *err);
/* Sends the spool only; same returns. */
int sp_fleet_flush(struct sp_fleet *f, struct sp_fleet_stats *st, struct sp_err *err);

enum { SP_FLEET_BY_HOST = 1, SP_FLEET_BY_TIME = 2 };
struct sp_fleet_query {
	const char *service;  /* NULL = every service */
	const char *host;     /* glob (* ? [...]), NULL = every host */
	const char *const *labels;
	int nlabels;
	int64_t since, until; /* wall-clock seconds, [since, until) */
	int by;               /* SP_FLEET_BY_ flags */
	const char *function; /* sp_fleet_hosts: the function */
	const char *value;    /* sp_fleet_hosts: the value column, NULL = time if any, else the first */
};
/* Writes the slice as a binary stream to out.  Returns 0, 1 when the range
 * holds no samples (err: "no samples for service S between A and B"), or
 * -1 with err filled. */
int sp_fleet_get(struct sp_fleet *f, const struct sp_fleet_query *q, FILE *out, struct sp_fleet_stats *st,
		 struct sp_err *err);
/* Writes the per-host table of q->function (host, value in it, the host's
 * total, share), the hosts spending most first.  Same returns. */
int sp_fleet_hosts(struct sp_fleet *f, const struct sp_fleet_query *q, FILE *out, struct sp_err *err);

/* "-1h", "-30m", "now", "@EPOCH", "2026-11-26T10:00:00[Z]" (UTC) ->
 * seconds since the epoch; -1 when malformed. */
int sp_fleet_parse_time(const char *s, int64_t now, int64_t *out);
/* The content id of a stack (see above) of frames names[i] with kinds[i]. */
uint64_t sp_fleet_stack_id(const char *const *names, const size_t *lens, const uint8_t *kinds, size_t n);

#endif
