/* fleet.c — see fleet.h.  The store: share/fleet/schema.sql.  Transport:
 * RowBinary over sp_http (ClickHouse's HTTP interface), which needs no
 * escaping and costs the server no parsing of text. */
#include "fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "fold.h"

/* share/fleet/schema.sql, verbatim (t9000 checks that they agree). */
const char sp_fleet_schema[] =
	"-- The fleet store of stackpipe (pfleet(1)), for ClickHouse 18.16 and later.\n"
	"-- pfleet init applies it (with the database renamed by --database); by hand:\n"
	"--   clickhouse-client --multiquery < share/fleet/schema.sql\n"
	"-- Every statement is idempotent.  Times are UTC.\n"
	"CREATE DATABASE IF NOT EXISTS stackpipe;\n"
	"-- The stack dictionary, content-addressed: id is the 64-bit xxh3 chain of\n"
	"-- the stack's frames (pfleet(1), STACK IDS), the same on every host, so a\n"
	"-- stack is stored once for the fleet; duplicates sent by several hosts merge\n"
	"-- in the background and readers take any() of an id.  frames are root\n"
	"-- first; kinds are the stream's frame kinds (0 native, 1 kernel, 2 jit,\n"
	"-- 3 inlined, 4 python, 5 synthetic); files and lines their source file\n"
	"-- and line ('' and 0: unknown), as a Python frame's \"dumps\n"
	"-- (json/__init__.py:231)\" (schema 2; pfleet init adds them to a\n"
	"-- dictionary of the first schema).\n"
	"CREATE TABLE IF NOT EXISTS stackpipe.stacks (\n"
	"    id UInt64,\n"
	"    frames Array(String),\n"
	"    kinds Array(UInt8),\n"
	"    files Array(String),\n"
	"    lines Array(UInt32)\n"
	") ENGINE = ReplacingMergeTree() ORDER BY id;\n"
	"-- One row per time bucket, host and stack for each value column of the\n"
	"-- input (value_name \"samples\", \"period\", \"cpu-ns\" ... with its unit),\n"
	"-- holding the bucket's sum as an integer (the unit carries the scale: ns,\n"
	"-- bytes, samples; a value that is not whole is rounded, and put says how\n"
	"-- many were).  Schema 3, laid out for bytes on disk (ClickHouse 18.16 has\n"
	"-- no column codecs) and for the queries: ordered by service, hour, host,\n"
	"-- stack, so that one host's or a few hosts' rows are a range of the key\n"
	"-- and each column holds long runs; the bucket is its hour, minute and\n"
	"-- second; the value, exact over all of Int64, is split into its four low\n"
	"-- bytes and its high 32 bits (value_hi, sign included), each a column of\n"
	"-- its own, as a byte shuffle: a column of low bytes and one of mostly\n"
	"-- zero high bits compress far better than 8-byte integers (on the\n"
	"-- bench's fleet, zstd: 2.7 bytes a value against 3.2).  bucket and value\n"
	"-- are ALIAS columns, computed when read.  batch names the insert that\n"
	"-- wrote the row, so a retry after a lost answer can tell whether the first\n"
	"-- attempt landed (32 bits: the question is asked only of the batch's time\n"
	"-- range, where another batch with the same id is a chance of one in\n"
	"-- hundreds of millions).  The first schema's value was Float64, the\n"
	"-- second's an Int64 column and bucket a DateTime column ordered\n"
	"-- (service, hour, stack, host, bucket); pfleet init and put name what to\n"
	"-- do with such a store (pfleet(1), SCHEMA VERSIONS).\n"
	"CREATE TABLE IF NOT EXISTS stackpipe.samples (\n"
	"    hour DateTime,\n"
	"    minute UInt8,\n"
	"    second UInt8,\n"
	"    service String,\n"
	"    host String,\n"
	"    labels Array(String),\n"
	"    stack UInt64,\n"
	"    value_name String,\n"
	"    unit String,\n"
	"    value0 UInt8,\n"
	"    value1 UInt8,\n"
	"    value2 UInt8,\n"
	"    value3 UInt8,\n"
	"    value_hi Int32,\n"
	"    batch UInt32,\n"
	"    bucket DateTime ALIAS hour + minute * 60 + second,\n"
	"    value Int64 ALIAS toInt64(value_hi) * 4294967296 + value3 * 16777216 + value2 * 65536 + value1 * 256 + value0\n"
	") ENGINE = MergeTree() PARTITION BY toDate(hour)\n"
	"  ORDER BY (service, hour, host, stack, minute, second);\n"
	"-- The hourly rollup: the samples of each hour summed over hosts (labels\n"
	"-- kept), a plain table written by pfleet put (schema 3): each batch of\n"
	"-- sample rows is followed by an insert of its sums per hour, labels, value\n"
	"-- column and stack, under the same batch id (a retry after a lost answer\n"
	"-- asks whether it landed, as for the samples).  pfleet get reads it instead\n"
	"-- of samples when the range is whole hours, with no --host and no --by:\n"
	"-- one service's hour is then about as many rows as distinct stacks, not\n"
	"-- hosts x buckets x stacks.  Rows of an hour merge in the background;\n"
	"-- readers sum() them (batch keeps one of the merged rows' ids).  rows\n"
	"-- counts the samples rows summed into a row: get compares a range's\n"
	"-- sum(rows) with the samples' count() (a put cut between a batch's two\n"
	"-- inserts leaves the rollup short until its spool is sent).\n"
	"CREATE TABLE IF NOT EXISTS stackpipe.samples_hourly (\n"
	"    hour DateTime,\n"
	"    service String,\n"
	"    labels Array(String),\n"
	"    stack UInt64,\n"
	"    value_name String,\n"
	"    unit String,\n"
	"    value Int64,\n"
	"    rows UInt64,\n"
	"    batch UInt32\n"
	") ENGINE = SummingMergeTree((value, rows)) PARTITION BY toDate(hour)\n"
	"  ORDER BY (service, hour, value_name, unit, labels, stack);\n"
	"-- Retention (ClickHouse 19.6 and later; 18.16 has no TTL: pfleet init says\n"
	"-- so and pfleet prune drops the days older than --ttl instead, of both tables):\n"
	"-- TTL: ALTER TABLE stackpipe.samples MODIFY TTL hour + INTERVAL 30 DAY;\n"
	"-- TTL: ALTER TABLE stackpipe.samples_hourly MODIFY TTL hour + INTERVAL 30 DAY;\n"
	"-- Sharding (pfleet init --cluster NAME, after pfleet init on every shard;\n"
	"-- NAME is a cluster of the server's remote_servers):\n"
	"-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.samples_dist AS stackpipe.samples ENGINE = Distributed(NAME, stackpipe, samples, sipHash64(host));\n"
	"-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.stacks_dist AS stackpipe.stacks ENGINE = Distributed(NAME, stackpipe, stacks, id);\n"
	"-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.samples_hourly_dist AS stackpipe.samples_hourly ENGINE = Distributed(NAME, stackpipe, samples_hourly, rand());\n";

/* ---- connection and statements ---- */

int sp_fleet_open(struct sp_fleet *f, const char *url, const char *db, struct sp_err *err)
{
	memset(f, 0, sizeof *f);
	if (sp_http_url_parse(url, &f->url, err) < 0)
		return -1;
	if (strcmp(f->url.path, "/"))
		return sp_err_set(err, "%s: the path '%s': ClickHouse's HTTP address has none (http://HOST:PORT)", url, f->url.path), -1;
	snprintf(f->urltext, sizeof f->urltext, "%s", url);
	size_t n = strlen(db);
	if (!n || n >= sizeof f->db || strspn(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n)
		return sp_err_set(err, "--database '%s': a name of letters, digits and '_' is needed", db), -1;
	memcpy(f->db, db, n + 1);
	f->timeout_ms = 60000;
	f->retries = 3;
	f->retry_delay = 0.5;
	const char *fault = getenv("SP_FLEET_FAULT");
	if (fault && !strncmp(fault, "lose-answer:", 12))
		f->fault_lose = atol(fault + 12);
	return 0;
}

void sp_fleet_close(struct sp_fleet *f)
{
	sp_buf_release(&f->resp);
	sp_buf_release(&f->q);
	sp_buf_release(&f->migrate);
}

/* The sentence of a ClickHouse error answer: "Code: 16, e.displayText() =
 * DB::Exception: No such column x in table y, e.what() = DB::Exception". */
static void server_sentence(const struct sp_buf *b, char *out, size_t cap)
{
	size_t n = b->len;
	const char *s = b->p ? b->p : "";
	const char *m = memmem(s, n, "DB::Exception: ", 15);
	if (m) {
		m += 15;
		n -= (size_t)(m - s);
		s = m;
		const char *e = memmem(s, n, ", e.what()", 10);
		if (e)
			n = (size_t)(e - s);
	}
	const char *nl = memchr(s, '\n', n);
	if (nl)
		n = (size_t)(nl - s);
	while (n && (s[n - 1] == '.' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = 0;
	if (!n)
		snprintf(out, cap, "an empty answer");
}

enum { FR_OK = 0, FR_DOWN = -1, FR_CUT = -2, FR_REFUSED = -3 };

/* One request: sql in the URL when a body is given, else as the body;
 * ctype: the body's Content-Type (NULL: bytes). */
static int request_type(struct sp_fleet *f, const char *sql, const void *body, size_t n, const char *settings,
			const char *ctype, struct sp_err *err);
static int request(struct sp_fleet *f, const char *sql, const void *body, size_t n, const char *settings,
		   struct sp_err *err)
{
	return request_type(f, sql, body, n, settings, NULL, err);
}

static int request_type(struct sp_fleet *f, const char *sql, const void *body, size_t n, const char *settings,
			const char *ctype, struct sp_err *err)
{
	struct sp_buf *q = &f->q;
	sp_buf_reset(q);
	sp_buf_adds(q, "?max_query_size=104857600&wait_end_of_query=1");
	if (settings)
		sp_buf_adds(q, settings);
	if (body) {
		sp_buf_adds(q, "&query=");
		sp_http_urlencode(q, sql, strlen(sql));
	} else {
		body = sql;
		n = strlen(sql);
	}
	int status;
	struct sp_err e;
	int r = sp_http_post_type(&f->url, sp_buf_cstr(q), ctype, body, n, f->timeout_ms, &status, &f->resp, &e);
	if (r == SP_HTTP_REFUSED || r == SP_HTTP_BROKEN) {
		sp_err_set(err, "%s: %s", f->urltext, e.msg);
		return r == SP_HTTP_REFUSED ? FR_DOWN : FR_CUT;
	}
	if (r == SP_HTTP_CUT) {
		sp_err_set(err, "%s: %s", f->urltext, e.msg);
		return FR_CUT;
	}
	if (status != 200) {
		char s[400];
		server_sentence(&f->resp, s, sizeof s);
		const char *b = sp_buf_cstr(&f->resp);
		if (!strstr(b, "DB::Exception")) {
			/* not ClickHouse's answer: a proxy before it that has no
			 * server to give the request to is down for now; anything
			 * else is not a ClickHouse server (nothing to wait for) */
			if (status == 502 || status == 503 || status == 504) {
				sp_err_set(err, "%s: the server is unavailable (HTTP %d): %s", f->urltext, status, s);
				return FR_DOWN;
			}
			sp_err_set(err, "%s: not a ClickHouse server (HTTP %d, no ClickHouse error in the answer): %s", f->urltext,
				   status, s);
			return FR_REFUSED;
		}
		/* ClickHouse answers 500 for most errors (18.16: all of them);
		 * the error's code tells a server short of something for now
		 * (memory, too many parts or queries, a timeout, a replica or
		 * shard not reachable) from a request it will never take (no
		 * such column or table, a syntax or type error) */
		const char *c = strstr(b, "Code: ");
		int code = c ? atoi(c + 6) : 0;
		static const int transient[] = { 159, 173, 202, 203, 209, 210, 225, 236, 241, 242, 243, 252, 279, 319, 394, 999 };
		int tr = status == 503;
		for (size_t i = 0; !tr && i < sizeof transient / sizeof *transient; i++)
			tr = code == transient[i];
		sp_err_set(err, "%s: the server %s (HTTP %d): %s", f->urltext, tr ? "cannot take it now" : "refused it", status, s);
		return tr ? FR_DOWN : FR_REFUSED;
	}
	return FR_OK;
}

int sp_fleet_sql(struct sp_fleet *f, const char *sql, const void *body, size_t n, struct sp_err *err)
{
	return request(f, sql, body, n, NULL, err) == FR_OK ? 0 : -1;
}

/* SQL string literal. */
static void add_sqlstr(struct sp_buf *b, const char *s, size_t n)
{
	sp_buf_addc(b, '\'');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'' || s[i] == '\\')
			sp_buf_addc(b, '\\');
		sp_buf_addc(b, s[i]);
	}
	sp_buf_addc(b, '\'');
}

/* The statements of the schema for database db: comment lines dropped,
 * "-- TTL: " and "-- CLUSTER: " lines kept only when asked for. */
static void schema_statements(struct sp_buf *out, const char *db, const char *cluster, unsigned ttl)
{
	const char *s = sp_fleet_schema;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = (size_t)(e - s);
		const char *line = s;
		s = e + 1;
		if (n > 8 && !memcmp(line, "-- TTL: ", 8)) {
			if (!ttl)
				continue;
			line += 8, n -= 8;
		} else if (n > 12 && !memcmp(line, "-- CLUSTER: ", 12)) {
			if (!cluster)
				continue;
			line += 12, n -= 12;
		} else if (n >= 2 && !memcmp(line, "--", 2)) {
			continue;
		}
		/* rename the database, the cluster and the TTL's days */
		for (size_t i = 0; i < n;) {
			if (i + 9 <= n && !memcmp(line + i, "stackpipe", 9)) {
				sp_buf_adds(out, db);
				i += 9;
			} else if (cluster && i + 4 <= n && !memcmp(line + i, "NAME", 4)) {
				sp_buf_adds(out, cluster);
				i += 4;
			} else if (ttl && i + 7 <= n && !memcmp(line + i, " 30 DAY", 7)) {
				sp_buf_addf(out, " %u DAY", ttl);
				i += 7;
			} else {
				sp_buf_addc(out, line[i++]);
			}
		}
		sp_buf_addc(out, '\n');
	}
}

static int server_version(struct sp_fleet *f, int *major, int *minor, struct sp_err *err)
{
	if (sp_fleet_sql(f, "SELECT version()", NULL, 0, err) < 0)
		return -1;
	*major = *minor = 0;
	sscanf(sp_buf_cstr(&f->resp), "%d.%d", major, minor);
	return 0;
}

/* The store's schema: 3 (this one), 2 (value an Int64 column), 1 (value
 * Float64), or 0 when there is no samples table yet; -1 when the server
 * does not answer.  Left in f->schema. */
static int store_schema(struct sp_fleet *f, struct sp_err *err)
{
	struct sp_buf q = SP_BUF_INIT;
	sp_buf_addf(&q, "SELECT 'clickhouse', name, type FROM system.columns WHERE database = '%s' AND table = 'samples'"
		    " AND name IN ('value', 'value_hi') UNION ALL SELECT 'clickhouse', '', '' FORMAT TabSeparated", f->db);
	int r = request(f, sp_buf_cstr(&q), NULL, 0, NULL, err);
	sp_buf_release(&q);
	if (r == FR_REFUSED)
		return f->schema = -2;
	if (r != FR_OK)
		return f->schema = -1;
	const char *t = sp_buf_cstr(&f->resp);
	if (!strstr(t, "clickhouse\t\t\n")) { /* an answer, but not to the question */
		char s[200];
		server_sentence(&f->resp, s, sizeof s);
		sp_err_set(err, "%s: not a ClickHouse server (its answer to a query: '%s')", f->urltext, s);
		return f->schema = -2;
	}
	if (strstr(t, "\tvalue_hi\t"))
		f->schema = 3;
	else if (strstr(t, "\tvalue\tInt64\n"))
		f->schema = 2;
	else if (strstr(t, "\tvalue\t"))
		f->schema = 1;
	else
		f->schema = 0;
	return f->schema;
}

/* The statement that copies the rows of an older schema's samples table
 * (db.samples_vN) into this one's: the value's bytes and high half are its
 * shifts, cut to the columns' types by the insert. */
static void copy_statement(struct sp_buf *b, const char *d, int from)
{
	sp_buf_addf(b, "INSERT INTO %s.samples SELECT toDateTime(t - t %% 3600), intDiv(t %% 3600, 60), t %% 60, service, host, "
		    "labels, stack, value_name, unit, v", d);
	for (int i = 1; i <= 4; i++)
		sp_buf_addf(b, ", bitShiftRight(v, %d)", 8 * i);
	sp_buf_addf(b, ", batch FROM (SELECT *, toUInt32(bucket) AS t, %s AS v FROM %s.samples_v%d)",
		    from == 1 ? "toInt64(round(value))" : "value", d, from);
}

int sp_fleet_check_schema(struct sp_fleet *f, struct sp_err *err)
{
	struct sp_err e;
	int s = store_schema(f, &e);
	if (s == -2) /* not ClickHouse, or it refuses to be asked: nothing will store there */
		return *err = e, -1;
	if (s < 0) /* the server is down: put spools, init says so */
		return 0;
	f->schema_checked = s == 0 || s == 3;
	if (f->schema_checked)
		return 0;
	/* the statements in f->migrate, one a line (the caller prints them:
	 * too long for a sentence) */
	const char *d = f->db;
	struct sp_buf *m = &f->migrate;
	sp_buf_reset(m);
	if (s == 2) /* the view: put writes the rollup itself now */
		sp_buf_addf(m, "  DROP TABLE %s.samples_hourly;\n", d);
	sp_buf_addf(m, "  RENAME TABLE %s.samples TO %s.samples_v%d;\n  pfleet init%s%s %s\n  ", d, d, s,
		    strcmp(d, "stackpipe") ? " --database " : "", strcmp(d, "stackpipe") ? d : "", f->urltext);
	copy_statement(m, d, s);
	sp_buf_adds(m, ";\n");
	/* the rollup of the rows copied (put writes it for the new ones) */
	sp_buf_addf(m, "  INSERT INTO %s.samples_hourly SELECT hour, service, labels, stack, value_name, unit, sum(value), count(), 0"
		    " FROM %s.samples GROUP BY hour, service, labels, stack, value_name, unit;\n", d, d);
	sp_err_set(err, "%s: %s is a store of pfleet's %s schema (samples.value %s): get still reads it; to write to it,"
		   " copy it over with these statements (pfleet(1), SCHEMA VERSIONS):", f->urltext, d,
		   s == 1 ? "first" : "second", s == 1 ? "Float64" : "an Int64 column");
	return -1;
}

/* Runs the schema's statements (with cluster, the Distributed tables' too). */
static int run_statements(struct sp_fleet *f, const char *cluster, unsigned ttl, struct sp_err *err)
{
	struct sp_buf all = SP_BUF_INIT;
	schema_statements(&all, f->db, cluster, ttl);
	sp_buf_addc(&all, 0);
	int rc = 0;
	char *s = all.p;
	while (s && *s && rc == 0) {
		char *e = strchr(s, ';');
		if (!e)
			break;
		*e = 0;
		while (*s == '\n' || *s == ' ')
			s++;
		if (*s && sp_fleet_sql(f, s, NULL, 0, err) < 0)
			rc = -1;
		s = e + 1;
	}
	sp_buf_release(&all);
	return rc;
}

int sp_fleet_init(struct sp_fleet *f, const char *cluster, unsigned ttl_days, int *no_ttl, struct sp_err *err)
{
	int ma, mi;
	if (server_version(f, &ma, &mi, err) < 0)
		return -1;
	if (sp_fleet_check_schema(f, err) < 0)
		return -1;
	int has_ttl = ma > 19 || (ma == 19 && mi >= 6);
	*no_ttl = ttl_days && !has_ttl;
	if (cluster && !*cluster)
		return sp_err_set(err, "--cluster: an empty name"), -1;
	if (cluster && strspn(cluster, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(cluster))
		return sp_err_set(err, "--cluster '%s': a name of letters, digits, '_' and '-' is needed", cluster), -1;
	f->remade[0] = 0;
	/* the shard's tables, then (a dictionary of the first schema given
	 * its source files and lines first) the Distributed ones */
	int rc = run_statements(f, NULL, has_ttl ? ttl_days : 0, err);
	struct sp_buf q = SP_BUF_INIT;
	sp_buf_addf(&q, "SELECT count() FROM system.columns WHERE database = '%s' AND table = 'stacks' AND name = 'files'"
		    " FORMAT TabSeparated", f->db);
	if (rc == 0 && sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err) < 0)
		rc = -1;
	if (rc == 0 && !strcmp(sp_buf_cstr(&f->resp), "0\n")) {
		sp_buf_reset(&q);
		sp_buf_addf(&q, "ALTER TABLE %s.stacks ADD COLUMN files Array(String), ADD COLUMN lines Array(UInt32)", f->db);
		if (sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err) < 0)
			rc = -1;
	}
	/* a Distributed table made over an older schema's table (its columns
	 * copied then) is made again: it holds no rows of its own */
	static const char *const tabs[] = { "stacks", "samples", "samples_hourly" };
	for (int i = 0; cluster && rc == 0 && i < 3; i++) {
		sp_buf_reset(&q);
		sp_buf_adds(&q, "SELECT ");
		for (int k = 0; k < 2; k++)
			sp_buf_addf(&q, "(SELECT groupArray(concat(name, ' ', type)) FROM (SELECT name, type FROM system.columns"
				    " WHERE database = '%s' AND table = '%s%s' ORDER BY name))%s", f->db, tabs[i],
				    k ? "_dist" : "", k ? "" : " != ");
		sp_buf_addf(&q, " AND (SELECT count() FROM system.tables WHERE database = '%s' AND name = '%s_dist')"
			    " FORMAT TabSeparated", f->db, tabs[i]);
		if (sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err) < 0) {
			rc = -1;
			break;
		}
		if (strcmp(sp_buf_cstr(&f->resp), "1\n"))
			continue;
		sp_buf_reset(&q);
		sp_buf_addf(&q, "DROP TABLE %s.%s_dist", f->db, tabs[i]);
		if (sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err) < 0)
			rc = -1;
		size_t n = strlen(f->remade);
		snprintf(f->remade + n, sizeof f->remade - n, "%s%s_dist", n ? ", " : "", tabs[i]);
	}
	if (rc == 0 && cluster)
		rc = run_statements(f, cluster, has_ttl ? ttl_days : 0, err);
	sp_buf_release(&q);
	return rc;
}

int sp_fleet_prune(struct sp_fleet *f, unsigned ttl_days, unsigned *dropped, struct sp_err *err)
{
	*dropped = 0;
	if (sp_fleet_check_schema(f, err) < 0)
		return -1;
	struct sp_buf q = SP_BUF_INIT;
	sp_buf_addf(&q, "SELECT DISTINCT partition FROM system.parts WHERE active AND database = '%s' AND table = 'samples'"
		    " AND toDate(partition) < today() - %u ORDER BY partition FORMAT TabSeparated", f->db, ttl_days);
	int rc = sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err);
	struct sp_buf parts = SP_BUF_INIT;
	if (rc == 0)
		sp_buf_add(&parts, f->resp.p, f->resp.len);
	sp_buf_addc(&parts, 0);
	for (char *s = parts.p; rc == 0 && *s;) {
		char *e = strchr(s, '\n');
		if (!e)
			break;
		*e = 0;
		sp_buf_reset(&q);
		/* the rollup's day first: a failure between the two leaves the
		 * raw day, which the next prune drops (the other way, a day
		 * would stay in the rollup only) */
		sp_buf_addf(&q, "ALTER TABLE %s.samples_hourly DROP PARTITION '%s'", f->db, s);
		if (sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err) < 0) {
			rc = -1;
			break;
		}
		sp_buf_reset(&q);
		sp_buf_addf(&q, "ALTER TABLE %s.samples DROP PARTITION '%s'", f->db, s);
		if (sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, err) < 0)
			rc = -1;
		else
			++*dropped;
		s = e + 1;
	}
	sp_buf_release(&parts);
	sp_buf_release(&q);
	return rc;
}

/* ---- RowBinary ---- */

static void rb_u64(struct sp_buf *b, uint64_t v)
{
	unsigned char x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	sp_buf_add(b, x, 8);
}
static inline void put_le(unsigned char *o, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		o[i] = (unsigned char)(v >> (8 * i));
}
static void rb_u32(struct sp_buf *b, uint32_t v)
{
	unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24) };
	sp_buf_add(b, x, 4);
}
static void rb_str(struct sp_buf *b, const char *s, size_t n)
{
	sp_buf_add_uvarint(b, n);
	sp_buf_add(b, s, n);
}

struct rb_reader {
	const unsigned char *p, *e;
	int bad;
};
static uint64_t rd_u64(struct rb_reader *r)
{
	if (r->e - r->p < 8) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | r->p[i];
	r->p += 8;
	return v;
}
static uint32_t rd_u32(struct rb_reader *r)
{
	if (r->e - r->p < 4) {
		r->bad = 1;
		return 0;
	}
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return v;
}
static double rd_f64(struct rb_reader *r)
{
	uint64_t v = rd_u64(r);
	double d;
	memcpy(&d, &v, 8);
	return d;
}
static uint64_t rd_varint(struct rb_reader *r)
{
	uint64_t v = 0;
	for (int sh = 0; sh < 64; sh += 7) {
		if (r->p >= r->e) {
			r->bad = 1;
			return 0;
		}
		unsigned c = *r->p++;
		v |= (uint64_t)(c & 127) << sh;
		if (!(c & 128))
			return v;
	}
	r->bad = 1;
	return 0;
}
static const char *rd_str(struct rb_reader *r, size_t *n)
{
	uint64_t l = rd_varint(r);
	if (r->bad || (uint64_t)(r->e - r->p) < l) {
		r->bad = 1;
		*n = 0;
		return "";
	}
	const char *s = (const char *)r->p;
	r->p += l;
	*n = (size_t)l;
	return s;
}

/* ---- stack ids ---- */

/* A frame with a source file or line (a Python frame's "file:line")
 * hashes them too, after a 0 byte; a frame without either hashes as the
 * first schema's did. */
static uint64_t frame_step(uint64_t h, const char *name, size_t n, uint8_t kind, const char *file, size_t fn,
			   uint32_t line, struct sp_buf *tmp)
{
	sp_buf_reset(tmp);
	sp_buf_add(tmp, name, n);
	sp_buf_addc(tmp, (char)kind);
	if (fn || line) {
		sp_buf_addc(tmp, 0);
		sp_buf_add(tmp, file, fn);
		sp_buf_addf(tmp, ":%u", line);
	}
	return sp_hash_seed(tmp->p, tmp->len, h);
}

uint64_t sp_fleet_stack_id(const char *const *names, const size_t *lens, const uint8_t *kinds, size_t n)
{
	struct sp_buf tmp = SP_BUF_INIT;
	uint64_t h = 0;
	for (size_t i = 0; i < n; i++)
		h = frame_step(h, names[i], lens[i], kinds[i], NULL, 0, 0, &tmp);
	sp_buf_release(&tmp);
	return h;
}

/* ---- times ---- */

int sp_fleet_parse_time(const char *s, int64_t now, int64_t *out)
{
	char *end;
	if (!strcmp(s, "now")) {
		*out = now;
		return 0;
	}
	if (*s == '-' || *s == '+') {
		double v = strtod(s + 1, &end);
		if (end == s + 1 || v < 0)
			return -1;
		double mul = !strcmp(end, "s") || !*end ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : 0;
		if (!mul)
			return -1;
		*out = now + (int64_t)((*s == '-' ? -1 : 1) * v * mul);
		return 0;
	}
	if (*s == '@') {
		long long v = strtoll(s + 1, &end, 10);
		if (end == s + 1 || *end)
			return -1;
		*out = v;
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *e = strptime(s, "%Y-%m-%d", &tm);
	if (!e)
		return -1;
	if (*e == 'T' || *e == ' ') {
		const char *e2 = strptime(e + 1, "%H:%M:%S", &tm);
		if (!e2)
			e2 = strptime(e + 1, "%H:%M", &tm);
		if (!e2)
			return -1;
		e = e2;
	}
	if (*e == 'Z')
		e++;
	if (*e)
		return -1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

static void fmt_time(char *b, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(b, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* ---- sending batches: retries, the landed check, the spool ---- */

enum { T_STACKS = 0, T_SAMPLES = 1, T_HOURLY = 2 };
static const char *const table_name[] = { "stacks", "samples", "samples_hourly" };
static const char *const table_cols[] = {
	"(id, frames, kinds, files, lines)",
	"(hour, minute, second, service, host, labels, stack, value_name, unit, value0, value1, value2, value3, value_hi, batch)",
	"(hour, service, labels, stack, value_name, unit, value, rows, batch)",
};

struct batch {
	int table;
	uint64_t rows, id;
	uint32_t bmin, bmax; /* the buckets (samples) or hours (rollup) it holds */
	const char *body;
	size_t n;
	const char *service, *host; /* a put's sample batch: the range of the key the landed check reads; else NULL */
};

static void table_ref(struct sp_fleet *f, struct sp_buf *b, int table)
{
	sp_buf_addf(b, "%s.%s%s", f->db, table_name[table], f->cluster ? "_dist" : "");
}

/* 1 when the batch (samples or rollup) is in the store, 0 when not, -1
 * when the server cannot tell (down), -2 when it refuses the question (or
 * holds part of the batch): err filled.  A rollup batch's rows may have been
 * summed into older rows of the same key since (a merge keeps one of their
 * batch ids): any of its rows found says it landed; none found after a
 * merge took every one would send it again, which get's rows-vs-count()
 * check then finds (pfleet(1), ROLLUP). */
static int landed(struct sp_fleet *f, const struct batch *bt, struct sp_err *err)
{
	struct sp_buf q = SP_BUF_INIT;
	const char *col = bt->table == T_HOURLY ? "hour" : "bucket";
	sp_buf_adds(&q, "SELECT count() FROM ");
	table_ref(f, &q, bt->table);
	sp_buf_addf(&q, " WHERE %s >= toDateTime(%u) AND %s <= toDateTime(%u) AND batch = %llu", col, bt->bmin, col, bt->bmax,
		    (unsigned long long)bt->id);
	if (f->schema == 3 && bt->table == T_SAMPLES)
		sp_buf_addf(&q, " AND hour >= toDateTime(%u) AND hour <= toDateTime(%u)", bt->bmin - bt->bmin % 3600, bt->bmax);
	if (bt->service) { /* the key's range (service, hour, host): a few granules read, not the days' */
		sp_buf_adds(&q, " AND service = ");
		add_sqlstr(&q, bt->service, strlen(bt->service));
		sp_buf_adds(&q, " AND host = ");
		add_sqlstr(&q, bt->host, strlen(bt->host));
	}
	sp_buf_adds(&q, " FORMAT TabSeparated");
	int r = request(f, sp_buf_cstr(&q), NULL, 0, NULL, err);
	sp_buf_release(&q);
	if (r == FR_REFUSED)
		return -2;
	if (r != FR_OK)
		return -1;
	unsigned long long c = strtoull(sp_buf_cstr(&f->resp), NULL, 10);
	if (c && c != bt->rows && bt->table == T_SAMPLES)
		return sp_err_set(err, "%s: batch %016llx holds %llu rows in the store, not %llu (rows deleted by hand?)", f->urltext,
				  (unsigned long long)bt->id, c, (unsigned long long)bt->rows), -2;
	return c ? 1 : 0;
}

static void pause_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Stores one batch.  Returns 0, FR_REFUSED (the server said no: retrying
 * does not help) or FR_DOWN (no answer after the retries), err filled.
 * maybe: the batch may already be in the store (from the spool). */
static int send_batch(struct sp_fleet *f, const struct batch *bt, int maybe, struct sp_fleet_stats *st, struct sp_err *err)
{
	struct sp_buf sql = SP_BUF_INIT;
	sp_buf_adds(&sql, "INSERT INTO ");
	table_ref(f, &sql, bt->table);
	sp_buf_addf(&sql, " %s FORMAT RowBinary", table_cols[bt->table]);
	int rc = FR_DOWN;
	double delay = f->retry_delay;
	if (bt->table == T_STACKS)
		maybe = 0; /* a stack stored twice is merged by the table: no need to ask */
	sp_err_set(err, "%s: not sent", f->urltext);
	for (int a = 0;; a++) {
		if (maybe) {
			int l = landed(f, bt, err);
			if (l == 1) {
				st->landed++;
				rc = FR_OK;
				break;
			}
			if (l == -2) {
				rc = FR_REFUSED;
				break;
			}
			if (l == 0)
				maybe = 0;
		}
		if (!maybe) {
			int r = request(f, sp_buf_cstr(&sql), bt->body, bt->n, f->cluster ? "&insert_distributed_sync=1" : NULL, err);
			if (r == FR_OK && bt->table != T_STACKS && ++f->nbatches == f->fault_lose) {
				sp_err_set(err, "%s: the answer was lost (SP_FLEET_FAULT)", f->urltext);
				r = FR_CUT;
			}
			if (r == FR_OK || r == FR_REFUSED) {
				rc = r;
				break;
			}
			if (r == FR_CUT)
				maybe = 1;
		}
		if (a >= f->retries)
			break;
		st->retried++;
		pause_s(delay);
		delay *= 2;
	}
	sp_buf_release(&sql);
	return rc;
}

static int spool_write(struct sp_fleet *f, const struct batch *bt, const char *body, size_t n, struct sp_err *err);

/* The spool: records of "pfleet-spool 4 TABLE ROWS BATCH BMIN BMAX BYTES
 * RAW\n" and BYTES of the RAW bytes of RowBinary deflated (zlib, level 1:
 * a row's service, host, labels and value column repeat in every row, so
 * a sample row takes a few bytes, not 80), appended under an flock; a
 * failed append is cut off again, so the file never holds half a record.
 * (Records "pfleet-spool 3 ... BYTES\n" of RowBinary, written before, are
 * still read.) */
static int spool_append(struct sp_fleet *f, const struct batch *bt, struct sp_err *err)
{
	if (!f->spool)
		return sp_err_set(err, "no spool file: %llu rows not stored", (unsigned long long)bt->rows), -1;
	uLongf zn = compressBound((uLong)bt->n);
	unsigned char *z = sp_xmalloc(zn);
	if (compress2(z, &zn, (const Bytef *)bt->body, (uLong)bt->n, 1) != Z_OK) {
		free(z);
		return sp_err_set(err, "cannot compress a spool record: %llu rows not stored", (unsigned long long)bt->rows), -1;
	}
	int rc = spool_write(f, bt, (const char *)z, (size_t)zn, err);
	free(z);
	return rc;
}

static int spool_write(struct sp_fleet *f, const struct batch *bt, const char *body, size_t n, struct sp_err *err)
{
	int fd = open(f->spool, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return sp_err_set(err, "cannot open the spool %s: %s: %llu rows not stored", f->spool, strerror(errno),
				  (unsigned long long)bt->rows), -1;
	flock(fd, LOCK_EX);
	off_t at = lseek(fd, 0, SEEK_END);
	char head[160];
	int hn = snprintf(head, sizeof head, "pfleet-spool 4 %s %llu %016llx %u %u %zu %zu\n", table_name[bt->table],
			  (unsigned long long)bt->rows, (unsigned long long)bt->id, bt->bmin, bt->bmax, n, bt->n);
	if (f->spool_max && at >= 0 && (unsigned long long)at + (size_t)hn + n > f->spool_max) {
		close(fd);
		return sp_err_set(err, "the spool %s is full (%lld bytes; --spool-max %llu): %llu rows not stored", f->spool,
				  (long long)at, f->spool_max, (unsigned long long)bt->rows), -1;
	}
	int rc = 0;
	const char *parts[2] = { head, body };
	size_t lens[2] = { (size_t)hn, n };
	for (int i = 0; i < 2 && rc == 0; i++)
		for (size_t o = 0; o < lens[i];) {
			ssize_t w = write(fd, parts[i] + o, lens[i] - o);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				break;
			}
			o += (size_t)w;
		}
	if (rc == 0 && fsync(fd) < 0)
		rc = -1;
	if (rc < 0) {
		int e = errno ? errno : ENOSPC;
		if (at >= 0 && ftruncate(fd, at) < 0) { /* best effort: the record is cut below anyway */
		}
		sp_err_set(err, "cannot write the spool %s: %s: %llu rows not stored", f->spool, strerror(e),
			   (unsigned long long)bt->rows);
	}
	close(fd);
	return rc;
}

/* Sends a batch, or spools it when the server does not take it.  *down is
 * set after a failure: later batches of the same run go to the spool
 * without waiting for the retries again.  Returns -1 only when the batch
 * could not be spooled either. */
static int store_batch(struct sp_fleet *f, const struct batch *bt, int maybe, int *down, struct sp_fleet_stats *st,
		       struct sp_err *err)
{
	struct sp_err e;
	int r = *down ? FR_DOWN : send_batch(f, bt, maybe, st, &e);
	if (r == FR_OK) {
		st->batches++;
		if (bt->table == T_SAMPLES)
			st->rows += bt->rows;
		else if (bt->table == T_HOURLY)
			st->rollup_rows += bt->rows;
		else
			st->stacks += bt->rows;
		return 0;
	}
	if (r == FR_REFUSED) /* not for later either: the spool would only grow */
		return sp_err_set(err, "%s: %llu rows not stored", e.msg, (unsigned long long)bt->rows), -1;
	if (!*down) {
		*down = 1;
		snprintf(st->first_error, sizeof st->first_error, "%s", e.msg);
	}
	if (spool_append(f, bt, err) < 0)
		return -1;
	st->spooled++;
	st->spooled_rows += bt->rows;
	return 0;
}

/* The sample rows of a spool record of schema 2 ("pfleet-spool 1": the
 * bucket a UInt32) in this schema's layout (hour, minute, second; the
 * value's 8 bytes are its bytes and high half alike).  -1: malformed. */
static int spool_rows_v1(const char *body, size_t n, unsigned long long rows, struct sp_buf *out)
{
	struct rb_reader r = { (const unsigned char *)body, (const unsigned char *)body + n, 0 };
	sp_buf_reset(out);
	for (unsigned long long i = 0; i < rows && !r.bad; i++) {
		uint32_t b = rd_u32(&r), in_hour = b % 3600;
		unsigned char hms[2] = { (unsigned char)(in_hour / 60), (unsigned char)(in_hour % 60) };
		rb_u32(out, b - in_hour);
		sp_buf_add(out, hms, 2);
		const unsigned char *rest = r.p;
		size_t sn;
		rd_str(&r, &sn); /* service, host */
		rd_str(&r, &sn);
		for (uint64_t k = rd_varint(&r); k && !r.bad; k--) /* labels */
			rd_str(&r, &sn);
		rd_u64(&r); /* stack */
		rd_str(&r, &sn); /* value_name, unit */
		rd_str(&r, &sn);
		rd_u64(&r); /* value */
		rd_u32(&r); /* batch */
		if (!r.bad)
			sp_buf_add(out, rest, (size_t)(r.p - rest));
	}
	return r.bad || r.p != r.e ? -1 : 0;
}

int sp_fleet_flush(struct sp_fleet *f, struct sp_fleet_stats *st, struct sp_err *err)
{
	if (!f->spool)
		return 0;
	int fd = open(f->spool, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : (sp_err_set(err, "cannot open the spool %s: %s", f->spool, strerror(errno)), -1);
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) { /* /dev/full in a test, a FIFO: nothing to read back */
		close(fd);
		return 0;
	}
	flock(fd, LOCK_EX);
	struct sp_buf all = SP_BUF_INIT, keep = SP_BUF_INIT, conv = SP_BUF_INIT;
	for (;;) {
		sp_buf_grow(&all, 1 << 20);
		ssize_t r = read(fd, all.p + all.len, all.cap - all.len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			sp_err_set(err, "cannot read the spool %s: %s", f->spool, strerror(errno));
			goto fail;
		}
		if (!r)
			break;
		all.len += (size_t)r;
	}
	if (all.len && !f->schema_checked && sp_fleet_check_schema(f, err) < 0)
		goto fail;
	int down = 0, rc = 0;
	for (size_t at = 0; at < all.len;) {
		const char *h = all.p + at, *nl = memchr(h, '\n', all.len - at);
		char tab[16];
		unsigned long long rows, id;
		unsigned bmin, bmax;
		size_t n, raw = 0;
		int ver = 0, nf = 0;
		char line[200];
		if (nl && (size_t)(nl - h) < sizeof line) { /* the header line alone (the body may start with digits) */
			memcpy(line, h, (size_t)(nl - h));
			line[nl - h] = 0;
			nf = sscanf(line, "pfleet-spool %d %15s %llu %llx %u %u %zu %zu", &ver, tab, &rows, &id, &bmin, &bmax, &n, &raw);
		}
		uLongf zl = (uLongf)raw;
		if (nf != (ver == 4 ? 8 : 7) || (ver != 1 && ver != 3 && ver != 4) ||
		    (strcmp(tab, "stacks") && strcmp(tab, "samples") && (ver == 1 || strcmp(tab, "samples_hourly"))) ||
		    n > all.len - (size_t)(nl + 1 - all.p) || raw > ((size_t)1 << 34) ||
		    (ver == 4 && (sp_buf_reset(&conv), sp_buf_grow(&conv, raw + 1),
				  uncompress((Bytef *)conv.p, &zl, (const Bytef *)nl + 1, (uLong)n) != Z_OK || zl != raw)) ||
		    (ver == 1 && !strcmp(tab, "samples") && spool_rows_v1(nl + 1, n, rows, &conv) < 0)) {
			sp_err_off(err, f->spool, at, "not a spool record of pfleet (the file was changed by hand?): "
				   "%zu bytes from here kept, not sent", all.len - at);
			sp_buf_add(&keep, h, all.len - at);
			rc = -1;
			break;
		}
		struct batch bt = { !strcmp(tab, "stacks") ? T_STACKS : !strcmp(tab, "samples") ? T_SAMPLES : T_HOURLY, rows, id,
				    bmin, bmax, nl + 1, n, NULL, NULL };
		if (ver == 1 && bt.table == T_SAMPLES) /* sent in this schema's layout */
			bt.body = conv.p, bt.n = conv.len;
		if (ver == 4) /* inflated */
			bt.body = conv.p, bt.n = raw;
		size_t reclen = (size_t)(nl + 1 - h) + n;
		struct sp_err e;
		int r = down ? FR_DOWN : send_batch(f, &bt, 1, st, &e);
		if (r == FR_OK && ver == 1 && bt.table == T_SAMPLES) {
			/* the second schema's view made its rollup rows; this
			 * schema's put sends them: here the server sums them
			 * (a failure leaves the rollup short, which get finds) */
			struct sp_buf q = SP_BUF_INIT;
			sp_buf_adds(&q, "INSERT INTO ");
			table_ref(f, &q, T_HOURLY);
			sp_buf_addf(&q, " %s SELECT hour, service, labels, stack, value_name, unit, sum(value), count(), batch FROM ",
				    table_cols[T_HOURLY]);
			table_ref(f, &q, T_SAMPLES);
			sp_buf_addf(&q, " WHERE hour >= toDateTime(%u) AND hour <= toDateTime(%u) AND batch = %llu GROUP BY hour, "
				    "service, labels, stack, value_name, unit, batch", bmin - bmin % 3600, bmax, id);
			struct sp_err e2;
			sp_fleet_sql(f, sp_buf_cstr(&q), NULL, 0, &e2);
			sp_buf_release(&q);
		}
		if (r == FR_OK) {
			st->unspooled++;
			st->unspooled_rows += rows;
		} else {
			if (!down)
				snprintf(st->first_error, sizeof st->first_error, "%s", e.msg);
			down = 1;
			sp_buf_add(&keep, h, reclen);
		}
		at += reclen;
	}
	/* what was not sent stays, in place (the lock is on this file) */
	if (ftruncate(fd, 0) < 0 || (keep.len && pwrite(fd, keep.p, keep.len, 0) != (ssize_t)keep.len) || fsync(fd) < 0) {
		sp_err_set(err, "cannot rewrite the spool %s: %s", f->spool, strerror(errno));
		rc = -1;
	}
	/* (an empty spool stays: removing it would lose the records of an
	 * appender waiting for the lock on this file) */
	sp_buf_release(&all);
	sp_buf_release(&keep);
	sp_buf_release(&conv);
	close(fd);
	if (rc < 0)
		return -1;
	if (down)
		return sp_err_set(err, "%s", st->first_error), 1;
	return 0;
fail:
	sp_buf_release(&all);
	sp_buf_release(&keep);
	sp_buf_release(&conv);
	close(fd);
	return -1;
}

/* ---- put: inputs into buckets, buckets into batches ---- */

/* A row of a batch, keyed for the samples' ORDER BY (service, hour, stack,
 * host, bucket; service and host are the batch's): major the hour (bucket /
 * 3600), minor the second in it << 3 | the value column.  The server writes
 * a block that arrives in its key's order without sorting it, which
 * saves it most of the work of a write.  A rollup row: major hour << 3 | the
 * value column's rank by name, minor the rows it sums, sum its value. */
struct srow {
	uint64_t stack;
	union {
		double v;    /* a sample row: the bucket's sum */
		int64_t sum; /* a rollup row */
	};
	uint32_t major, minor;
};

static int cmp_row_major_stack(const void *a, const void *b)
{
	const struct srow *x = a, *y = b;
	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* (rows of the same key are summed into one: their order does not matter) */
static int cmp_row(const void *a, const void *b)
{
	int c = cmp_row_major_stack(a, b);
	const struct srow *x = a, *y = b;
	return c ? c : x->minor < y->minor ? -1 : x->minor > y->minor;
}

/* Byte d of a row's sort key: minor's 2 low bytes, stack's 8, major's 4. */
static inline unsigned row_digit(const struct srow *x, int d)
{
	return d < 2 ? x->minor >> (8 * d) & 255 : d < 10 ? x->stack >> (8 * (d - 2)) & 255 : x->major >> (8 * (d - 10)) & 255;
}

/* Sorts n rows by (major, stack, minor) (with_minor 0: by (major, stack)):
 * a least-significant-digit radix sort, bytes that are the same in every
 * row skipped (a batch is mostly of one hour). */
static void sort_rows(struct srow *r, struct srow *tmp, size_t n, int with_minor)
{
	enum { ND = 14 }; /* minor's 2 low bytes, stack's 8, major's 4 */
	/* the bytes that differ between rows; and rows already in (major,
	 * minor) order (a batch's files follow each other in time) need no
	 * pass of minor's bytes: the sort keeps the order of equal keys */
	uint64_t so = 0, sa = ~(uint64_t)0;
	uint32_t mo = 0, ma = ~(uint32_t)0, no = 0, na = ~(uint32_t)0;
	int in_order = 1;
	for (size_t i = 0; i < n; i++) {
		const struct srow *x = &r[i];
		so |= x->stack, sa &= x->stack;
		mo |= x->major, ma &= x->major;
		no |= x->minor, na &= x->minor;
		if (i && (x->major < r[i - 1].major || (x->major == r[i - 1].major && x->minor < r[i - 1].minor)))
			in_order = 0;
	}
	int need[ND];
	for (int d = 0; d < ND; d++)
		need[d] = d < 2 ? with_minor && !in_order && ((no ^ na) >> (8 * d) & 255)
			: d < 10 ? ((so ^ sa) >> (8 * (d - 2)) & 255) != 0 : ((mo ^ ma) >> (8 * (d - 10)) & 255) != 0;
	/* ids are hashes: their top 16 bits split the rows into groups of a
	 * few, sorted by the whole key after the passes (the 6 low bytes'
	 * passes were half of put's sorting) */
	int groups = n >= 1024 && need[8] && need[9];
	if (groups)
		for (int d = 2; d < 8; d++)
			need[d] = 0;
	struct srow *src = r, *dst = tmp;
	for (int d = 0; d < ND; d++) {
		if (!need[d])
			continue; /* every row has the same byte here, or minor is in order */
		uint32_t h[256];
		memset(h, 0, sizeof h);
		for (size_t i = 0; i < n; i++)
			h[row_digit(&src[i], d)]++;
		size_t at = 0;
		for (int k = 0; k < 256; k++) {
			size_t c = h[k];
			h[k] = (uint32_t)at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[h[row_digit(&src[i], d)]++] = src[i];
		struct srow *t = src;
		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof *r);
	for (size_t i = 0; groups && i < n;) {
		size_t j = i + 1;
		while (j < n && r[j].major == r[i].major && r[j].stack >> 48 == r[i].stack >> 48)
			j++;
		int (*cmp)(const void *, const void *) = with_minor ? cmp_row : cmp_row_major_stack;
		if (j - i > 16) {
			qsort(r + i, j - i, sizeof *r, cmp);
		} else { /* a few: insertion */
			for (size_t k = i + 1; k < j; k++) {
				struct srow x = r[k];
				size_t m = k;
				for (; m > i && cmp(&r[m - 1], &x) > 0; m--)
					r[m] = r[m - 1];
				r[m] = x;
			}
		}
		i = j;
	}
}

struct ent {
	int64_t sec;    /* seconds from the input's first timestamped sample */
	uint64_t stack;
	uint32_t v;     /* index of its nvalues values in vals */
};

struct lhash {
	uint32_t lf; /* the thread's root frame; 0: none yet */
	uint64_t h;
};
struct putter {
	struct sp_sink sink;
	struct sp_fleet *f;
	const struct sp_fleet_put_opts *o;
	struct sp_fleet_stats *st;
	struct sp_err *err;
	struct sp_profile *p;
	int is_stdin;
	int64_t mtime_ns;
	/* per input */
	uint64_t *nh;          /* node -> stack id (0 = not yet) */
	size_t nhcap;
	int nvalues;
	char names[SP_MAX_VALUES][64], units[SP_MAX_VALUES][32];
	int have_t;
	uint64_t tref, tmax;   /* first and last timestamp (ns) */
	int64_t anchor_ns;     /* wall clock of tref; INT64_MIN until known */
	struct sp_u64map agg;  /* hash(sec, stack) -> ent index + 1 */
	struct ent *ents;
	size_t nents, cap;
	double *vals;
	size_t capv;
	/* whole run */
	struct sp_u64map known; /* stack ids queued for the dictionary or found in it */
	uint64_t *pend;         /* ids of this input not yet asked of the server */
	uint32_t *pend_node;    /* ... and their nodes */
	uint32_t *pend_lf;      /* ... and their thread root frames (0: none) */
	size_t npend, cappend;
	struct sp_buf stacks;   /* RowBinary of the queued stacks */
	uint64_t nstacks;
	struct sp_buf tmp, rows, labels;
	uint32_t *frames;
	size_t capf;
	struct sp_label_cache labc; /* thread -> its comm root frame */
	struct lhash *lh;       /* node -> its id under a thread's root frame (the last asked) */
	size_t lhcap;
	uint32_t *lframes;      /* a labelled stack's frames */
	size_t caplf;
	int down;
	struct batch bt;        /* the sample rows being gathered (in rv), across inputs */
	char service[256], host[256];
	uint64_t batch_seq;
	/* the batch being gathered: rows of one service, host and value
	 * columns (an input of others sends it first), sorted when sent */
	struct srow *rv, *rtmp;
	size_t nrv, caprv, caprtmp;
	struct srow *hv;        /* its rollup rows */
	size_t nhv, caphv;
	char bservice[256], bhost[256];
	int bnv;
	char bnames[SP_MAX_VALUES][64], bunits[SP_MAX_VALUES][32];
	struct sp_buf hrows;    /* RowBinary of the rollup rows */
	size_t meta0;           /* the input's metadata: p's from this index */
	struct sender *sd;      /* stores the batches while the next are read */
	int pinputs;            /* inputs read into p before this one */
};

/* Empties a map and keeps its table (an input's maps would grow from
 * nothing again for every file). */
static void map_clear(struct sp_u64map *m)
{
	if (m->tab)
		memset(m->tab, 0xff, (m->mask + 1) * sizeof *m->tab); /* every key UINT64_MAX: empty */
	m->used = 0;
}

static uint64_t frame_id_step(struct putter *u, uint64_t h, uint32_t frame)
{
	const struct sp_frame *fr = sp_frame_get(u->p, frame);
	return frame_step(h, sp_str(u->p, fr->name), sp_str_len(u->p, fr->name), fr->kind, fr->file ? sp_str(u->p, fr->file) : NULL,
			  fr->file ? sp_str_len(u->p, fr->file) : 0, fr->line, &u->tmp);
}

static uint64_t node_id(struct putter *u, uint32_t node)
{
	if (!node)
		return 0;
	if (node >= u->nhcap) {
		size_t c = u->nhcap ? u->nhcap : 1024;
		while (c <= node)
			c *= 2;
		u->nh = sp_xrealloc(u->nh, c * sizeof *u->nh);
		memset(u->nh + u->nhcap, 0, (c - u->nhcap) * sizeof *u->nh);
		u->nhcap = c;
	}
	if (u->nh[node])
		return u->nh[node];
	const struct sp_node *nd = sp_node_get(u->p, node);
	uint32_t parent = nd->parent, frame = nd->frame;
	/* recursion as deep as the stack: a stack of frames is bounded by its input */
	uint64_t h = frame_id_step(u, node_id(u, parent), frame);
	u->nh[node] = h;
	return h;
}

/* Notes a stack of the input not seen before in this run: resolve_stacks
 * asks the server which of them its dictionary lacks. */
static void queue_stack(struct putter *u, uint32_t node, uint32_t lf, uint64_t id)
{
	int found;
	uint64_t key = id == UINT64_MAX ? UINT64_MAX - 1 : id;
	sp_u64map_slot(&u->known, key, &found);
	if (found)
		return;
	if (u->npend == u->cappend) {
		u->cappend = u->cappend ? u->cappend * 2 : 1024;
		u->pend = sp_xrealloc(u->pend, u->cappend * sizeof *u->pend);
		u->pend_node = sp_xrealloc(u->pend_node, u->cappend * sizeof *u->pend_node);
		u->pend_lf = sp_xrealloc(u->pend_lf, u->cappend * sizeof *u->pend_lf);
	}
	u->pend[u->npend] = id;
	u->pend_lf[u->npend] = lf;
	u->pend_node[u->npend++] = node;
}

/* The frames of stack node under the thread's root frame lf (0: none),
 * as pfold shows it: a synthetic root ("[python frame changed]", pmerge
 * --tag) stays the root, above the thread.  Returns their number; the
 * frames are in u->lframes. */
static uint32_t labelled_frames(struct putter *u, uint32_t node, uint32_t lf)
{
	uint32_t d = sp_node_frames(u->p, node, &u->frames, &u->capf), n = 0, i = 0;
	if (d + 1 > u->caplf) {
		u->caplf = d + 64;
		u->lframes = sp_xrealloc(u->lframes, u->caplf * sizeof *u->lframes);
	}
	if (lf && d && sp_frame_get(u->p, u->frames[0])->kind == SP_KIND_SYNTHETIC)
		u->lframes[n++] = u->frames[i++];
	if (lf)
		u->lframes[n++] = lf;
	memcpy(u->lframes + n, u->frames + i, (d - i) * sizeof *u->frames);
	return n + d - i;
}

/* The id of stack node under the thread's root frame lf: node_id's chain
 * over labelled_frames, without making the stack a node of the profile (a
 * machine's recording has mostly stacks seen once, 20-40 frames deep:
 * interning each under its thread's root was a third of put's time).
 * Each node keeps its id under the last root asked (the threads of one
 * command share it), so a new stack costs its new frames: up to the first
 * prefix known, then down again. */
static uint64_t labelled_id(struct putter *u, uint32_t node, uint32_t lf)
{
	uint64_t h0 = 0;
	if (node >= u->lhcap) {
		size_t c = u->lhcap ? u->lhcap : 1024;
		while (c <= node)
			c *= 2;
		u->lh = sp_xrealloc(u->lh, c * sizeof *u->lh);
		memset(u->lh + u->lhcap, 0, (c - u->lhcap) * sizeof *u->lh);
		u->lhcap = c;
	}
	size_t d = 0;
	uint32_t at = node;
	for (; at && u->lh[at].lf != lf; at = sp_node_get(u->p, at)->parent) {
		if (d == u->caplf) {
			u->caplf = u->caplf ? u->caplf * 2 : 64;
			u->lframes = sp_xrealloc(u->lframes, u->caplf * sizeof *u->lframes);
		}
		u->lframes[d++] = at;
	}
	uint64_t h = at ? u->lh[at].h : (h0 = frame_id_step(u, 0, lf));
	while (d) {
		at = u->lframes[--d];
		const struct sp_node *nd = sp_node_get(u->p, at);
		if (nd->parent)
			h = frame_id_step(u, h, nd->frame);
		else if (sp_frame_get(u->p, nd->frame)->kind == SP_KIND_SYNTHETIC)
			/* a synthetic root stays the root, above the thread */
			h = frame_id_step(u, frame_id_step(u, 0, nd->frame), lf);
		else
			h = frame_id_step(u, h0, nd->frame);
		u->lh[at].lf = lf;
		u->lh[at].h = h;
	}
	return h;
}

/* The frames of a stack, as a dictionary row. */
static void add_stack_row(struct putter *u, uint32_t node, uint32_t lf, uint64_t id)
{
	uint32_t d = labelled_frames(u, node, lf);
	uint32_t *frames = u->lframes;
	rb_u64(&u->stacks, id);
	sp_buf_add_uvarint(&u->stacks, d);
	for (uint32_t i = 0; i < d; i++) {
		const struct sp_frame *fr = sp_frame_get(u->p, frames[i]);
		rb_str(&u->stacks, sp_str(u->p, fr->name), sp_str_len(u->p, fr->name));
	}
	sp_buf_add_uvarint(&u->stacks, d);
	for (uint32_t i = 0; i < d; i++)
		sp_buf_addc(&u->stacks, (char)sp_frame_get(u->p, frames[i])->kind);
	sp_buf_add_uvarint(&u->stacks, d);
	for (uint32_t i = 0; i < d; i++) {
		const struct sp_frame *fr = sp_frame_get(u->p, frames[i]);
		if (fr->file)
			rb_str(&u->stacks, sp_str(u->p, fr->file), sp_str_len(u->p, fr->file));
		else
			rb_str(&u->stacks, "", 0);
	}
	sp_buf_add_uvarint(&u->stacks, d);
	for (uint32_t i = 0; i < d; i++)
		rb_u32(&u->stacks, sp_frame_get(u->p, frames[i])->line);
	u->nstacks++;
}

/* Stacks pending before put asks the server about them and sends the
 * new ones' dictionary rows, while the input is read on. */
enum { STACK_CHUNK = 8192 };

/* Queues the dictionary rows of the pending stacks the server does not
 * have: each put of a host's profile would otherwise send the frames of
 * every stack again (most of a fleet's stacks are stored after the first
 * hosts' puts).  The ids go as the query's external data (a table "ids"
 * of the request's multipart body, one id a line), which the server reads
 * as a set: a list of literals IN (1, 2, ...) costs it one syntax-tree
 * node per id, and a string literal it splits (how it was asked before)
 * 20 times the external table's time (35,789 ids: 356-443 ms against
 * 4-22 ms on a loaded 2-CPU machine).  When the server does not answer,
 * every pending stack is queued (the batch goes to the spool whole). */
static void resolve_stacks(struct putter *u)
{
	enum { CHUNK = 1000000 };
	static const char boundary[] = "pfleet-3f9a1c0e7d5b2468-ids";
	struct sp_u64map have;
	sp_u64map_init(&have);
	struct sp_buf q = SP_BUF_INIT, body = SP_BUF_INIT;
	for (size_t at = 0; at < u->npend && !u->down; at += CHUNK) {
		size_t n = u->npend - at < CHUNK ? u->npend - at : CHUNK;
		sp_buf_reset(&q);
		sp_buf_adds(&q, "SELECT id FROM ");
		table_ref(u->f, &q, T_STACKS);
		sp_buf_adds(&q, " WHERE id IN ids FORMAT RowBinary");
		sp_buf_reset(&body);
		sp_buf_addf(&body, "--%s\r\nContent-Disposition: form-data; name=\"ids\"; filename=\"ids\"\r\n"
			    "Content-Type: text/tab-separated-values\r\n\r\n", boundary);
		for (size_t i = 0; i < n; i++) { /* not sp_buf_addf: vsnprintf was a tenth of put's instructions */
			sp_buf_addu64(&body, u->pend[at + i]);
			sp_buf_addc(&body, '\n');
		}
		sp_buf_addf(&body, "\r\n--%s--\r\n", boundary);
		struct sp_err e;
		if (request_type(u->f, sp_buf_cstr(&q), body.p, body.len, "&ids_structure=id%20UInt64",
				 "multipart/form-data; boundary=pfleet-3f9a1c0e7d5b2468-ids", &e) != FR_OK)
			break; /* sent whole; the send says why it fails */
		struct rb_reader rd = { (const unsigned char *)u->f->resp.p, (const unsigned char *)u->f->resp.p + u->f->resp.len, 0 };
		while (rd.p < rd.e) {
			uint64_t id = rd_u64(&rd);
			if (rd.bad)
				break;
			int found;
			*sp_u64map_slot(&have, id == UINT64_MAX ? id - 1 : id, &found) = 1;
		}
	}
	for (size_t i = 0; i < u->npend; i++) {
		uint64_t id = u->pend[i];
		int found;
		sp_u64map_get(&have, id == UINT64_MAX ? id - 1 : id, &found);
		if (found)
			u->st->stacks_known++;
		else
			add_stack_row(u, u->pend_node[i], u->pend_lf[i], id);
	}
	u->npend = 0;
	sp_buf_release(&q);
	sp_buf_release(&body);
	sp_u64map_release(&have);
}

static int flush_rows(struct putter *u);
static int send_stacks(struct putter *u);

/* Whether path starts as a binary stream (uncompressed). */
static int is_stream(const char *path)
{
	char b[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, b, sizeof b);
	close(fd);
	return n == 8 && !memcmp(b, "\x89SPS\r\n\x1a\n", 8);
}

/* Done with the inputs read into u->p: its pending stacks asked of the
 * server while their frames are at hand, its caches emptied. */
static void drop_profile(struct putter *u)
{
	if (!u->p)
		return;
	if (u->npend)
		resolve_stacks(u);
	sp_profile_free(u->p);
	u->p = NULL;
	u->pinputs = 0;
	if (u->nh)
		memset(u->nh, 0, u->nhcap * sizeof *u->nh);
	sp_label_cache_release(&u->labc);
	memset(&u->labc, 0, sizeof u->labc);
	if (u->lh)
		memset(u->lh, 0, u->lhcap * sizeof *u->lh);
}

static int set_columns(struct putter *u, const struct sp_sample *smp)
{
	int nv = sp_profile_nvalues(u->p);
	if (u->nvalues) {
		if (nv == u->nvalues)
			return 0;
		if (flush_rows(u) < 0) /* the columns changed within the input */
			return -1;
	}
	u->nvalues = nv;
	for (int i = 0; i < nv; i++) {
		snprintf(u->names[i], sizeof u->names[i], "%s", sp_profile_value_name(u->p, i));
		snprintf(u->units[i], sizeof u->units[i], "%s", sp_value_unit(u->p, i, smp->event));
	}
	return 0;
}

/* put's error (in u->err) as the reader's (err: usually the same, which
 * sp_err_set would copy onto itself). */
static int put_failed(struct putter *u, struct sp_err *err)
{
	if (err && err != u->err)
		*err = *u->err;
	return -1;
}

static int put_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct putter *u = (struct putter *)s;
	(void)p;
	u->st->samples++;
	if ((!u->nvalues || sp_profile_nvalues(p) != u->nvalues) && set_columns(u, smp) < 0)
		return put_failed(u, err);
	int64_t sec = 0;
	if (smp->time != SP_NO_TIME) {
		if (!u->have_t) {
			u->have_t = 1;
			u->tref = u->tmax = smp->time;
			if (u->o->start != INT64_MIN)
				u->anchor_ns = u->o->start * 1000000000LL;
			else if (u->is_stdin) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				u->anchor_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
			}
		}
		if (smp->time > u->tmax)
			u->tmax = smp->time;
		int64_t d = (int64_t)(smp->time - u->tref);
		sec = d >= 0 ? d / 1000000000LL : -((-d + 999999999LL) / 1000000000LL);
	}
	/* the thread's name as the root frame, as pfold prints it */
	uint32_t node = smp->stack;
	/* the root as pfold shows it: numbered thread names grouped
	 * (Thread-N), so a slice equals pfold of the input */
	u->labc.group = 1;
	uint32_t lf = smp->thread ? sp_label_frame(&u->labc, p, smp->thread, SP_LABEL_COMM) : 0;
	uint64_t id;
	if (lf) {
		id = labelled_id(u, node, lf);
	} else {
		id = node_id(u, node);
	}
	queue_stack(u, node, lf, id);
	if (u->npend >= STACK_CHUNK && send_stacks(u) < 0)
		return put_failed(u, err);
	int found;
	uint64_t key = sp_hash_seed(&sec, sizeof sec, id);
	if (key == UINT64_MAX)
		key--;
	uint32_t *slot = sp_u64map_slot(&u->agg, key, &found);
	size_t nv = (size_t)u->nvalues;
	if (!found) {
		if (u->nents == u->cap) {
			u->cap = u->cap ? u->cap * 2 : 4096;
			u->ents = sp_xrealloc(u->ents, u->cap * sizeof *u->ents);
		}
		if ((u->nents + 1) * nv > u->capv) {
			u->capv = u->capv ? u->capv * 2 : 4096 * SP_MAX_VALUES;
			u->vals = sp_xrealloc(u->vals, u->capv * sizeof *u->vals);
		}
		struct ent *e = &u->ents[u->nents];
		e->sec = sec;
		e->stack = id;
		e->v = (uint32_t)(u->nents * nv);
		memset(u->vals + e->v, 0, nv * sizeof *u->vals);
		*slot = (uint32_t)++u->nents;
	} else if (u->ents[*slot - 1].sec != sec || u->ents[*slot - 1].stack != id) {
		/* a hash collision of (second, stack): vanishingly rare; keep exact */
		return sp_err_set(err, "internal: bucket key collision"), -1;
	}
	double *v = u->vals + u->ents[*slot - 1].v;
	for (size_t i = 0; i < nv; i++)
		v[i] += smp->values[i];
	/* nothing is sent before the input's end: an input that fails
	 * (truncated, a read error) stores none of its rows.  Its buckets
	 * are held summed: a bucket's row per stack, not a sample each */
	return 0;
}

/* The input's last value of metadata key (the profile may hold earlier
 * inputs' too). */
static const char *input_meta(struct putter *u, const char *key)
{
	const char *v = NULL;
	size_t n = sp_meta_count(u->p);
	for (size_t i = u->meta0; i < n; i++) {
		const struct sp_meta *m = sp_meta_get(u->p, i);
		if (!strcmp(sp_str(u->p, m->key), key))
			v = sp_str(u->p, m->value);
	}
	return v;
}

static const char *service_of(struct putter *u)
{
	if (u->o->service)
		return u->o->service;
	if (u->service[0])
		return u->service;
	const char *c = input_meta(u, "command");
	if (c && *c) {
		size_t n = strcspn(c, " ");
		const char *b = c;
		for (const char *q = c; q < c + n; q++)
			if (*q == '/')
				b = q + 1;
		snprintf(u->service, sizeof u->service, "%.*s", (int)(c + n - b), b);
	} else if (sp_thread_count(u->p) > 1) {
		const struct sp_thread *t = sp_thread_get(u->p, 1);
		snprintf(u->service, sizeof u->service, "%s", sp_str(u->p, t->name));
	}
	return u->service[0] ? u->service : NULL;
}

static const char *host_of(struct putter *u)
{
	if (u->o->host)
		return u->o->host;
	if (u->host[0])
		return u->host;
	const char *h = input_meta(u, "host");
	if (h && *h)
		snprintf(u->host, sizeof u->host, "%s", h);
	else if (gethostname(u->host, sizeof u->host - 1) < 0)
		snprintf(u->host, sizeof u->host, "unknown");
	return u->host;
}

/* ---- the sender: a thread that stores the batches put encodes ----
 *
 * put reads and encodes the next batch while the last one is sent and
 * inserted (the server's work is most of an insert's time): the sender
 * takes one job at a time, the dictionary rows, a sample batch and its
 * rollup batch, in order, with its own connection state and counts
 * (merged at the end).  Its buffers are swapped with put's, not copied. */
struct job {
	struct sp_buf stacks, rows, hrows;
	uint64_t nstacks;
	struct batch bt, hb;
	char service[256], host[256];
};
struct sender {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy, quit, started;
	struct job job;
	struct sp_fleet f;       /* a copy of put's: its own buffers */
	struct sp_fleet_stats st;
	struct sp_err err;
	int rc, down;
};

/* Two puts of the same host at once (a cron run overlapping the last, a
 * retry by hand while the first still runs) would each ask whether a batch
 * is stored, each hear no, and both insert it.  The question and the
 * inserts of a batch are one step under an flock of a file named by the
 * store, the service and the host ($TMPDIR or /tmp/pfleet-HASH.lock): the
 * second put waits, then finds the batch stored and does not send it.
 * (Puts of one host from two machines are not serialised: pfleet(1).)
 * Returns the lock's descriptor, or -1 when the file cannot be opened
 * (the batch is sent unlocked; st->unlocked counts it). */
static int host_lock(const struct sp_fleet *f, const char *service, const char *host, struct sp_fleet_stats *st)
{
	struct sp_buf k = SP_BUF_INIT;
	sp_buf_add(&k, f->urltext, strlen(f->urltext) + 1);
	sp_buf_add(&k, f->db, strlen(f->db) + 1);
	sp_buf_add(&k, service, strlen(service) + 1);
	sp_buf_add(&k, host, strlen(host) + 1);
	uint64_t h = sp_hash(k.p, k.len);
	sp_buf_release(&k);
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/pfleet-%016llx.lock", dir && *dir ? dir : "/tmp", (unsigned long long)h);
	/* readable by every user (flock needs no more): another user's put
	 * of the same host takes the same lock */
	int fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		fchmod(fd, 0644);
	else
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		st->unlocked++;
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	return fd;
}

/* Stores a job's batches: the dictionary rows first (a reader must find
 * every stack a row names), the sample rows (asked first whether an
 * earlier run of the same put stored them: then only their rollup, when
 * that run was killed between the two inserts), then their rollup. */
static int run_job(struct sender *sd, struct job *j)
{
	struct sp_fleet *f = &sd->f;
	struct sp_fleet_stats *st = &sd->st;
	int rc = 0;
	if (j->nstacks) {
		struct batch sb = { T_STACKS, j->nstacks, 0, 0, 0, j->stacks.p, j->stacks.len, NULL, NULL };
		rc = store_batch(f, &sb, 0, &sd->down, st, &sd->err);
	}
	struct batch *bt = &j->bt, *hb = &j->hb;
	if (rc < 0 || !bt->rows)
		return rc;
	bt->body = j->rows.p, bt->n = j->rows.len;
	bt->service = j->service, bt->host = j->host;
	hb->body = j->hrows.p, hb->n = j->hrows.len;
	int lk = sd->down ? -1 : host_lock(f, bt->service, bt->host, st);
	struct sp_err e;
	int l = sd->down ? -1 : landed(f, bt, &e);
	if (l == -2) {
		sp_err_set(&sd->err, "%s: %llu rows not stored", e.msg, (unsigned long long)bt->rows);
		rc = -1;
	} else if (l == 1) {
		st->already++;
		st->already_rows += bt->rows;
		if (landed(f, hb, &e) == 0)
			rc = store_batch(f, hb, 0, &sd->down, st, &sd->err);
	} else {
		rc = store_batch(f, bt, l < 0, &sd->down, st, &sd->err);
		/* after the samples: a rollup never counts rows the samples
		 * lack (get's check reads the samples then) */
		if (rc == 0)
			rc = store_batch(f, hb, 0, &sd->down, st, &sd->err);
	}
	if (lk >= 0)
		close(lk); /* the flock goes with it */
	return rc;
}

static void *sender_main(void *arg)
{
	struct sender *sd = arg;
	pthread_mutex_lock(&sd->mu);
	for (;;) {
		while (!sd->busy && !sd->quit)
			pthread_cond_wait(&sd->cv, &sd->mu);
		if (!sd->busy)
			break;
		pthread_mutex_unlock(&sd->mu);
		int r = sd->rc < 0 ? -1 : run_job(sd, &sd->job); /* after a failure nothing more is sent */
		pthread_mutex_lock(&sd->mu);
		if (r < 0)
			sd->rc = -1;
		sd->busy = 0;
		pthread_cond_broadcast(&sd->cv);
	}
	pthread_mutex_unlock(&sd->mu);
	return NULL;
}

/* Waits until the sender is idle; its outcome so far (-1: err filled). */
static int sender_wait(struct sender *sd, int *down, struct sp_err *err)
{
	pthread_mutex_lock(&sd->mu);
	while (sd->busy)
		pthread_cond_wait(&sd->cv, &sd->mu);
	int rc = sd->rc;
	*down = sd->down;
	pthread_mutex_unlock(&sd->mu);
	if (rc < 0)
		*err = sd->err;
	return rc;
}

static void swap_buf(struct sp_buf *a, struct sp_buf *b)
{
	struct sp_buf t = *a;
	*a = *b;
	*b = t;
}

/* Hands the encoded batches (u->stacks, u->rows, u->hrows) to the sender
 * (waiting for the one before), or stores them here when no thread could
 * be started.  Returns -1 when a batch before failed (err filled). */
static int submit(struct putter *u, const struct batch *bt, const struct batch *hb)
{
	struct sender *sd = u->sd;
	if (sender_wait(sd, &u->down, u->err) < 0)
		return -1;
	struct job *j = &sd->job;
	swap_buf(&j->stacks, &u->stacks);
	swap_buf(&j->rows, &u->rows);
	swap_buf(&j->hrows, &u->hrows);
	/* the job before's rows, sent: a third job's dictionary rows were
	 * the first's again and its own */
	sp_buf_reset(&u->stacks);
	sp_buf_reset(&u->rows);
	sp_buf_reset(&u->hrows);
	j->nstacks = u->nstacks;
	u->nstacks = 0;
	j->bt = *bt;
	j->hb = *hb;
	snprintf(j->service, sizeof j->service, "%s", u->bservice);
	snprintf(j->host, sizeof j->host, "%s", u->bhost);
	if (!sd->started) { /* the batches stored here, in order */
		int r = run_job(sd, j);
		if (r < 0)
			*u->err = sd->err, sd->rc = -1;
		u->down = sd->down;
		return r;
	}
	pthread_mutex_lock(&sd->mu);
	sd->busy = 1;
	pthread_cond_broadcast(&sd->cv);
	pthread_mutex_unlock(&sd->mu);
	return 0;
}

/* The dictionary rows of the stacks queued so far that the server lacks,
 * sent while the input is still read (they are inserted as the reading
 * goes on: a new stack's frames are most of a first put's bytes).  A
 * stack stored without rows is harmless (a failing input stores none of
 * its sample rows, not none of its stacks); the retry finds it known. */
static int send_stacks(struct putter *u)
{
	resolve_stacks(u);
	if (!u->nstacks)
		return 0;
	struct batch none = { T_SAMPLES, 0, 0, UINT32_MAX, 0, NULL, 0, NULL, NULL };
	struct batch hb = { T_HOURLY, 0, 0, UINT32_MAX, 0, NULL, 0, NULL, NULL };
	return submit(u, &none, &hb);
}

static void sender_start(struct sender *sd, const struct sp_fleet *f, int down)
{
	memset(sd, 0, sizeof *sd);
	sd->f = *f;
	memset(&sd->f.resp, 0, sizeof sd->f.resp);
	memset(&sd->f.q, 0, sizeof sd->f.q);
	memset(&sd->f.migrate, 0, sizeof sd->f.migrate);
	sd->down = down;
	pthread_mutex_init(&sd->mu, NULL);
	pthread_cond_init(&sd->cv, NULL);
	sd->started = pthread_create(&sd->th, NULL, sender_main, sd) == 0;
}

/* Waits for the last job, ends the thread, adds its counts to st. */
static int sender_stop(struct sender *sd, int *down, struct sp_fleet_stats *st, struct sp_err *err)
{
	int rc = sender_wait(sd, down, err);
	if (sd->started) {
		pthread_mutex_lock(&sd->mu);
		sd->quit = 1;
		pthread_cond_broadcast(&sd->cv);
		pthread_mutex_unlock(&sd->mu);
		pthread_join(sd->th, NULL);
	}
	uint64_t *a = &st->samples, *b = &sd->st.samples;
	for (size_t i = 0; i < (size_t)(&st->rollup_rows - &st->samples) + 1; i++)
		a[i] += b[i];
	if (!st->first_error[0])
		snprintf(st->first_error, sizeof st->first_error, "%s", sd->st.first_error);
	sd->f.nbatches = 0;
	sp_fleet_close(&sd->f);
	sp_buf_release(&sd->job.stacks);
	sp_buf_release(&sd->job.rows);
	sp_buf_release(&sd->job.hrows);
	pthread_mutex_destroy(&sd->mu);
	pthread_cond_destroy(&sd->cv);
	return rc;
}

/* A batch's id is its content's: the hash of its rows (sorted: bucket,
 * stack, value column, value) and of what every row shares (service,
 * host, labels, value columns).  The same put run again (a retry by hand
 * after a failure, the same --partial twice) makes the same batches with
 * the same ids, which put finds stored and does not send twice. */
static uint32_t content_batch_id(const struct srow *rv, size_t n, const struct sp_buf *fix)
{
	uint64_t h = sp_hash(rv, n * sizeof *rv);
	return (uint32_t)sp_hash_seed(fix->p, fix->len, h); /* the column is UInt32 */
}

/* A bucket's sum as the Int64 of the column: a value that is not whole
 * (a scaled pprof value) is rounded, and counted. */
static int64_t to_int(struct putter *u, double v)
{
	double r = nearbyint(v);
	if (r != v)
		u->st->rounded++;
	if (r >= 9.2e18)
		return INT64_MAX;
	if (r <= -9.2e18)
		return INT64_MIN;
	return (int64_t)r;
}

static struct srow *grow_rows(struct srow **v, size_t *cap, size_t need)
{
	if (need > *cap) {
		size_t c = *cap ? *cap : 4096;
		while (c < need)
			c *= 2;
		*v = sp_xrealloc(*v, c * sizeof **v);
		*cap = c;
	}
	return *v;
}

/* The rollup rows of one (hour, stack) of the sorted batch. */
static void add_rollup(struct putter *u, uint32_t hour, uint64_t stack, const int64_t *sum, const uint32_t *n,
		       const int *rank)
{
	for (int k = 0; k < u->bnv; k++) {
		if (!n[k])
			continue;
		grow_rows(&u->hv, &u->caphv, u->nhv + 1);
		struct srow *h = &u->hv[u->nhv++];
		h->stack = stack;
		h->sum = sum[k];
		h->major = hour << 3 | (uint32_t)rank[k];
		h->minor = n[k];
	}
}

/* Sends the gathered sample rows as one batch, after the dictionary's new
 * stacks (a reader must find every stack a row names), then its rollup
 * rows (summed per hour, value column and stack) under the same id. */
static int send_rows(struct putter *u)
{
	if (u->npend)
		resolve_stacks(u);
	struct batch *bt = &u->bt;
	struct batch hb = { T_HOURLY, 0, 0, UINT32_MAX, 0, NULL, 0, NULL, NULL };
	sp_buf_reset(&u->hrows);
	if (u->nrv) {
		grow_rows(&u->rtmp, &u->caprtmp, u->nrv);
		sort_rows(u->rv, u->rtmp, u->nrv, 1);
		/* the value columns' ranks by name: the rollup's key has
		 * value_name before stack */
		int rank[SP_MAX_VALUES], byrank[SP_MAX_VALUES];
		for (int k = 0; k < u->bnv; k++) {
			rank[k] = 0;
			for (int j = 0; j < u->bnv; j++)
				rank[k] += strcmp(u->bnames[j], u->bnames[k]) < 0 || (!strcmp(u->bnames[j], u->bnames[k]) && j < k);
			byrank[rank[k]] = k;
		}
		size_t ls = strlen(u->bservice);
		size_t ln[SP_MAX_VALUES], lu[SP_MAX_VALUES];
		for (int k = 0; k < u->bnv; k++)
			ln[k] = strlen(u->bnames[k]), lu[k] = strlen(u->bunits[k]);
		/* a row's parts that are the batch's (service, host, labels) or
		 * a column's (value_name, unit), encoded once; a row is then
		 * written in place */
		struct sp_buf fix = SP_BUF_INIT;
		rb_str(&fix, u->bservice, ls);
		rb_str(&fix, u->bhost, strlen(u->bhost));
		sp_buf_add(&fix, u->labels.p, u->labels.len);
		size_t colat[SP_MAX_VALUES + 1], maxcol = 0;
		for (int k = 0; k < u->bnv; k++) {
			colat[k] = fix.len;
			rb_str(&fix, u->bnames[k], ln[k]);
			rb_str(&fix, u->bunits[k], lu[k]);
		}
		colat[u->bnv] = fix.len;
		for (int k = 0; k < u->bnv; k++)
			if (colat[k + 1] - colat[k] > maxcol)
				maxcol = colat[k + 1] - colat[k];
		size_t lfix = colat[0], rowmax = 4 + 2 + lfix + 8 + maxcol + 8 + 4;
		bt->id = content_batch_id(u->rv, u->nrv, &fix);
		int64_t hsum[SP_MAX_VALUES];
		uint32_t hn[SP_MAX_VALUES];
		memset(hn, 0, sizeof hn);
		memset(hsum, 0, sizeof hsum);
		u->nhv = 0;
		for (size_t i = 0; i < u->nrv;) {
			const struct srow *x = &u->rv[i];
			double v = x->v;
			size_t j = i + 1;
			/* the same bucket, stack and column from two inputs: one row */
			for (; j < u->nrv && u->rv[j].major == x->major && u->rv[j].stack == x->stack && u->rv[j].minor == x->minor; j++)
				v += u->rv[j].v;
			int k = (int)(x->minor & 7);
			uint32_t bucket = x->major * 3600 + (x->minor >> 3);
			if (v == 0) {
				u->st->dropped_zero++;
			} else {
				int64_t iv = to_int(u, v);
				/* schema 3: the bucket as hour, minute, second; the value
				 * as its four low bytes and its high 32 bits */
				uint32_t in_hour = x->minor >> 3;
				if (u->rows.cap - u->rows.len < rowmax)
					sp_buf_grow(&u->rows, rowmax);
				unsigned char *o = (unsigned char *)u->rows.p + u->rows.len;
				put_le(o, bucket - in_hour, 4);
				o[4] = (unsigned char)(in_hour / 60);
				o[5] = (unsigned char)(in_hour % 60);
				memcpy(o + 6, fix.p, lfix);
				o += 6 + lfix;
				put_le(o, x->stack, 8);
				size_t lc = colat[k + 1] - colat[k];
				memcpy(o + 8, fix.p + colat[k], lc);
				o += 8 + lc;
				put_le(o, (uint64_t)iv, 8); /* little-endian: the bytes, then the high half */
				put_le(o + 8, (uint32_t)bt->id, 4);
				u->rows.len = (size_t)(o + 12 - (unsigned char *)u->rows.p);
				bt->rows++;
				if (bucket < bt->bmin)
					bt->bmin = bucket;
				if (bucket > bt->bmax)
					bt->bmax = bucket;
				hsum[k] += iv;
				hn[k]++;
			}
			if (j == u->nrv || u->rv[j].major != x->major || u->rv[j].stack != x->stack) {
				add_rollup(u, x->major, x->stack, hsum, hn, rank);
				memset(hn, 0, sizeof hn);
				memset(hsum, 0, sizeof hsum);
			}
			i = j;
		}
		sp_buf_release(&fix);
		if (u->bnv > 1) { /* by (hour, value column's name, stack) */
			grow_rows(&u->rtmp, &u->caprtmp, u->nhv);
			sort_rows(u->hv, u->rtmp, u->nhv, 0);
		}
		hb.rows = u->nhv;
		hb.id = bt->id;
		for (size_t i = 0; i < u->nhv; i++) {
			const struct srow *h = &u->hv[i];
			uint32_t hour = (h->major >> 3) * 3600;
			int k = byrank[h->major & 7];
			rb_u32(&u->hrows, hour);
			rb_str(&u->hrows, u->bservice, ls);
			sp_buf_add(&u->hrows, u->labels.p, u->labels.len);
			rb_u64(&u->hrows, h->stack);
			rb_str(&u->hrows, u->bnames[k], ln[k]);
			rb_str(&u->hrows, u->bunits[k], lu[k]);
			rb_u64(&u->hrows, (uint64_t)h->sum);
			rb_u64(&u->hrows, h->minor);
			rb_u32(&u->hrows, (uint32_t)bt->id);
			if (hour < hb.bmin)
				hb.bmin = hour;
			if (hour > hb.bmax)
				hb.bmax = hour;
		}
	}
	int rc = 0;
	if (bt->rows || u->nstacks)
		rc = submit(u, bt, &hb);
	u->nrv = 0;
	bt->rows = 0;
	bt->bmin = UINT32_MAX;
	bt->bmax = 0;
	sp_buf_reset(&u->rows);
	return rc;
}

/* Turns the aggregated entries of an input into rows of the batch (the
 * batch is sent first when it holds another service's, host's or value
 * columns' rows), sent in batches of batch_rows. */
static int flush_rows(struct putter *u)
{
	struct sp_err *err = u->err;
	if (!u->nents)
		return 0;
	const char *service = service_of(u);
	if (!service)
		return sp_err_set(err, "the input names no command and no thread: give --service"), -1;
	const char *host = host_of(u);
	if (u->anchor_ns == INT64_MIN) /* a file: its last sample was written at its mtime */
		u->anchor_ns = u->o->start != INT64_MIN ? u->o->start * 1000000000LL
			: u->mtime_ns - (u->have_t ? (int64_t)(u->tmax - u->tref) : 0);
	int64_t a = u->anchor_ns / 1000000000LL - (u->anchor_ns % 1000000000LL < 0);
	int64_t B = u->o->bucket;
	int nv = u->nvalues;
	int same = u->nrv && !strcmp(u->bservice, service) && !strcmp(u->bhost, host) && u->bnv == nv;
	for (int k = 0; same && k < nv; k++)
		same = !strcmp(u->bnames[k], u->names[k]) && !strcmp(u->bunits[k], u->units[k]);
	if (u->nrv && !same && send_rows(u) < 0)
		return -1;
	if (!u->nrv) {
		snprintf(u->bservice, sizeof u->bservice, "%s", service);
		snprintf(u->bhost, sizeof u->bhost, "%s", host);
		u->bnv = nv;
		memcpy(u->bnames, u->names, sizeof u->bnames);
		memcpy(u->bunits, u->units, sizeof u->bunits);
	}
	int rc = 0;
	for (size_t i = 0; i < u->nents && rc == 0; i++) {
		const struct ent *e = &u->ents[i];
		int64_t w = a + e->sec;
		w = (w / B - (w % B < 0)) * B;
		if (w < 0 || w > UINT32_MAX) {
			sp_err_set(err, "a sample's time is outside 1970-2106 (give --start)");
			rc = -1;
			break;
		}
		grow_rows(&u->rv, &u->caprv, u->nrv + (size_t)nv);
		for (int k = 0; k < nv; k++) {
			double v = u->vals[e->v + (size_t)k];
			if (v == 0) {
				u->st->dropped_zero++;
				continue;
			}
			struct srow *r = &u->rv[u->nrv++];
			r->stack = e->stack;
			r->v = v;
			r->major = (uint32_t)(w / 3600);
			r->minor = (uint32_t)(w % 3600) << 3 | (uint32_t)k;
		}
		if (u->nrv >= u->o->batch_rows && send_rows(u) < 0)
			rc = -1;
	}
	u->nents = 0;
	map_clear(&u->agg);
	return rc;
}

int sp_fleet_put(struct sp_fleet *f, const struct sp_fleet_put_opts *o, char **files, int nfiles,
		 struct sp_fleet_stats *st, struct sp_err *err)
{
	memset(st, 0, sizeof *st);
	if (sp_fleet_check_schema(f, err) < 0)
		return -1;
	int fr = sp_fleet_flush(f, st, err);
	if (fr < 0)
		return -1;
	struct putter u;
	memset(&u, 0, sizeof u);
	u.sink.sample = put_sample;
	u.f = f;
	u.o = o;
	u.st = st;
	u.err = err;
	u.down = fr == 1;
	struct sender sd;
	sender_start(&sd, f, u.down);
	u.sd = &sd;
	u.bt.table = T_SAMPLES;
	u.bt.bmin = UINT32_MAX;
	sp_u64map_init(&u.known);
	sp_u64map_init(&u.agg);
	/* the labels, sorted, as their RowBinary array */
	const char **ls = sp_xmalloc(((size_t)o->nlabels + 1) * sizeof *ls);
	for (int i = 0; i < o->nlabels; i++)
		ls[i] = o->labels[i];
	for (int i = 1; i < o->nlabels; i++)
		for (int j = i; j > 0 && strcmp(ls[j - 1], ls[j]) > 0; j--) {
			const char *t = ls[j];
			ls[j] = ls[j - 1];
			ls[j - 1] = t;
		}
	sp_buf_add_uvarint(&u.labels, (uint64_t)o->nlabels);
	for (int i = 0; i < o->nlabels; i++)
		rb_str(&u.labels, ls[i], strlen(ls[i]));
	free(ls);
	int rc = 0, failed = 0;
	struct sp_err ierr; /* the first input that failed */
	/* With --service, the inputs share one profile: a stack read again
	 * from the next file is then the same node, and its id, its
	 * dictionary question and its thread root are reused (a fleet's
	 * per-minute files repeat most of their stacks).  Without it, an
	 * input's service comes from its own threads: a profile each. */
	int reuse = o->service != NULL;
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	if (o->read)
		ro = *o->read;
	for (int i = 0; i < nfiles && rc == 0; i++) {
		if (!u.p)
			u.p = sp_profile_new();
		u.nents = 0;
		u.is_stdin = !strcmp(files[i], "-");
		/* untimed input is stored at its file's mtime; standard input's
		 * at the time it is read (0 would put it in 1970, out of every
		 * query's range) */
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		u.mtime_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
		struct stat sb;
		if (!u.is_stdin && stat(files[i], &sb) == 0)
			u.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
		u.nvalues = 0;
		u.have_t = 0;
		u.anchor_ns = INT64_MIN;
		u.service[0] = u.host[0] = 0;
		/* only a binary stream shares the profile, and only when its
		 * value columns are the earlier inputs' (other formats match
		 * theirs to the profile's, or drop some) */
		int share = reuse && !u.is_stdin && is_stream(files[i]);
		if (u.pinputs && !share) {
			drop_profile(&u);
			u.p = sp_profile_new();
		}
		ro.same_columns = share;
		u.meta0 = sp_meta_count(u.p);
		uint64_t s0 = st->samples;
		int r = sp_read_file(files[i], o->format, u.p, &u.sink, &ro, NULL, err);
		if (r < 0 && st->samples == s0 && u.pinputs) {
			/* failed before its first sample, in a profile of earlier
			 * inputs (their value columns are not its own): read
			 * alone, or it says what is wrong with it */
			drop_profile(&u);
			u.p = sp_profile_new();
			u.meta0 = 0;
			r = sp_read_file(files[i], o->format, u.p, &u.sink, &ro, NULL, err);
		}
		if (o->read)
			o->read->bad_lines = ro.bad_lines;
		u.pinputs++;
		if (r == 0 && u.nents && !service_of(&u)) { /* an input of its own: the others are still stored */
			sp_err_set(err, "%s: the input names no command and no thread: give --service", files[i]);
			r = -1;
		}
		if (r < 0) {
			/* all or nothing: none of its rows are stored (its
			 * stacks' dictionary rows may be: they are only names);
			 * the next inputs are still stored */
			if (!failed++)
				ierr = *err;
			st->failed_samples += st->samples - s0;
			u.nents = 0;
			map_clear(&u.agg);
		} else {
			rc = flush_rows(&u);
		}
		if (!share)
			drop_profile(&u);
	}
	/* the rows gathered last (of the inputs read whole) */
	if (rc == 0)
		rc = send_rows(&u);
	struct sp_err serr;
	if (sender_stop(&sd, &u.down, st, &serr) < 0 && rc == 0) {
		*err = serr;
		rc = -1;
	}
	drop_profile(&u);
	free(u.nh);
	free(u.ents);
	free(u.vals);
	free(u.frames);
	free(u.pend);
	free(u.pend_node);
	free(u.pend_lf);
	free(u.lh);
	free(u.lframes);
	sp_u64map_release(&u.known);
	sp_u64map_release(&u.agg);
	sp_buf_release(&u.stacks);
	sp_buf_release(&u.tmp);
	sp_buf_release(&u.rows);
	sp_buf_release(&u.hrows);
	sp_buf_release(&u.labels);
	free(u.rv);
	free(u.rtmp);
	free(u.hv);
	if (rc < 0)
		return -1;
	if (failed) {
		st->failed_inputs = (uint64_t)failed;
		*err = ierr;
		return -1;
	}
	if (u.down)
		return sp_err_set(err, "%s", st->first_error), 1;
	return 0;
}

/* ---- get: a slice, aggregated by the server ---- */

/* The WHERE clause of a query of table (T_SAMPLES or T_HOURLY). */
static void add_where(struct sp_fleet *f, struct sp_buf *b, const struct sp_fleet_query *q, int table)
{
	const char *t = table == T_HOURLY ? "hour" : "bucket";
	sp_buf_addf(b, " WHERE %s >= toDateTime(%lld) AND %s < toDateTime(%lld)", t, (long long)q->since, t,
		    (long long)q->until);
	/* schema 3: bucket is computed; its hours (UTC, as put and the
	 * copy statement cut them, whatever the server's time zone) are the
	 * key's */
	if (table == T_SAMPLES && f->schema == 3)
		sp_buf_addf(b, " AND hour >= toDateTime(%lld) AND hour < toDateTime(%lld)",
			    (long long)(q->since - ((q->since % 3600) + 3600) % 3600), (long long)q->until);
	if (q->service) {
		sp_buf_adds(b, " AND service = ");
		add_sqlstr(b, q->service, strlen(q->service));
	}
	if (q->host && strcmp(q->host, "*")) {
		/* the glob as an anchored RE2 pattern */
		struct sp_buf re = SP_BUF_INIT;
		sp_buf_addc(&re, '^');
		for (const char *s = q->host; *s; s++) {
			if (*s == '*')
				sp_buf_adds(&re, ".*");
			else if (*s == '?')
				sp_buf_addc(&re, '.');
			else if (*s == '[' && strchr(s + 1, ']')) {
				const char *e = strchr(s + 2, ']');
				if (!e)
					e = strchr(s + 1, ']');
				sp_buf_addc(&re, '[');
				s++;
				if (*s == '!') {
					sp_buf_addc(&re, '^');
					s++;
				}
				for (; s < e; s++) {
					if (*s == '\\' || *s == '[')
						sp_buf_addc(&re, '\\');
					sp_buf_addc(&re, *s);
				}
				sp_buf_addc(&re, ']');
			} else {
				if (strchr("\\.+()|{}^$[]", *s))
					sp_buf_addc(&re, '\\');
				sp_buf_addc(&re, *s);
			}
		}
		sp_buf_addc(&re, '$');
		/* the glob's literal start as a range of the key (schema 3
		 * orders by host within an hour): web-1* reads web-1... only */
		size_t pn = strcspn(q->host, "*?[");
		if (pn) {
			sp_buf_adds(b, " AND host >= ");
			add_sqlstr(b, q->host, pn);
			if ((unsigned char)q->host[pn - 1] < 0xff) {
				char up[256];
				size_t un = pn < sizeof up ? pn : sizeof up;
				memcpy(up, q->host, un);
				if (un == pn) {
					up[un - 1]++;
					sp_buf_adds(b, " AND host < ");
					add_sqlstr(b, up, un);
				}
			}
		}
		sp_buf_adds(b, " AND match(host, ");
		add_sqlstr(b, re.p, re.len);
		sp_buf_addc(b, ')');
		sp_buf_release(&re);
	}
	for (int i = 0; i < q->nlabels; i++) {
		sp_buf_adds(b, " AND has(labels, ");
		add_sqlstr(b, q->labels[i], strlen(q->labels[i]));
		sp_buf_addc(b, ')');
	}
}

/* "no samples for service api, hosts web-*, label k=v, between A and B" */
static int no_samples(const struct sp_fleet_query *q, const char *what, struct sp_err *err)
{
	char a[32], b[32];
	fmt_time(a, sizeof a, q->since);
	fmt_time(b, sizeof b, q->until);
	struct sp_buf m = SP_BUF_INIT;
	sp_buf_addf(&m, "no samples%s for ", what);
	if (q->service)
		sp_buf_addf(&m, "service %s", q->service);
	else
		sp_buf_adds(&m, "any service");
	if (q->host)
		sp_buf_addf(&m, ", hosts %s", q->host);
	for (int i = 0; i < q->nlabels; i++)
		sp_buf_addf(&m, ", label %s", q->labels[i]);
	sp_buf_addf(&m, " between %s and %s UTC", a, b);
	sp_err_set(err, "%s", sp_buf_cstr(&m));
	sp_buf_release(&m);
	return 1;
}

struct column {
	char name[64], unit[32];
};

/* The value columns in the slice ("samples" first).  Returns their number
 * (0: no samples) or -1. */
static int slice_columns(struct sp_fleet *f, const struct sp_fleet_query *q, int table, struct column *cols,
			 struct sp_err *err)
{
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_adds(&b, "SELECT value_name, any(unit) FROM ");
	table_ref(f, &b, table);
	add_where(f, &b, q, table);
	sp_buf_adds(&b, " GROUP BY value_name ORDER BY value_name != 'samples', value_name FORMAT RowBinary");
	int r = sp_fleet_sql(f, sp_buf_cstr(&b), NULL, 0, err);
	sp_buf_release(&b);
	if (r < 0)
		return -1;
	struct rb_reader rd = { (const unsigned char *)f->resp.p, (const unsigned char *)f->resp.p + f->resp.len, 0 };
	int n = 0;
	while (rd.p < rd.e && !rd.bad) {
		size_t ln, lu;
		const char *nm = rd_str(&rd, &ln), *un = rd_str(&rd, &lu);
		if (rd.bad)
			break;
		if (n == SP_MAX_VALUES)
			return sp_err_set(err, "the slice has more than %d value columns: narrow it", SP_MAX_VALUES), -1;
		snprintf(cols[n].name, sizeof cols[n].name, "%.*s", (int)ln, nm);
		snprintf(cols[n].unit, sizeof cols[n].unit, "%.*s", (int)lu, un);
		n++;
	}
	if (rd.bad)
		return sp_err_set(err, "%s: a malformed answer (%zu bytes)", f->urltext, f->resp.len), -1;
	return n;
}

/* Which table answers q, and its value columns (their count, or -1):
 * for whole hours of every host the hourly rollup, which holds the
 * answer in about a row per stack and hour; the samples when there is
 * no rollup, or it is empty or out of step with them (said in st). */
static int pick_table(struct sp_fleet *f, const struct sp_fleet_query *q, struct column *cols, int *tablep,
		      struct sp_fleet_stats *st, struct sp_err *err)
{
	int table = !q->by && (!q->host || !strcmp(q->host, "*")) && q->since % 3600 == 0 && q->until % 3600 == 0
		? T_HOURLY : T_SAMPLES;
	int nv = slice_columns(f, q, table, cols, err);
	if (nv < 0 && table == T_HOURLY && strstr(err->msg, "doesn't exist")) {
		table = T_SAMPLES;
		nv = slice_columns(f, q, table, cols, err);
	}
	if (nv < 0)
		return -1;
	if (table == T_HOURLY && nv == 0) {
		/* an empty rollup: the samples may still hold the range (an
		 * insert cut short; a second-schema rollup's hours cut by a server
		 * whose time zone is not a whole number of hours off UTC) */
		nv = slice_columns(f, q, T_SAMPLES, cols, err);
		if (nv < 0)
			return -1;
		table = T_SAMPLES;
		st->rollup_stale = nv > 0;
	}
	if (table == T_HOURLY && nv > 0) {
		/* the rollup is filled by the samples' inserts, but not in the
		 * same transaction: a server killed between the two writes of an
		 * insert leaves them apart (the retry finds the samples stored
		 * and does not send them again).  The rows it summed are counted
		 * against the samples' rows (a count over the primary key's range
		 * reads no value column, so it is cheaper than summing them). */
		struct sp_buf c = SP_BUF_INIT;
		sp_buf_adds(&c, "SELECT (SELECT count() FROM ");
		table_ref(f, &c, T_SAMPLES);
		add_where(f, &c, q, T_SAMPLES);
		sp_buf_adds(&c, ") = (SELECT sum(rows) FROM ");
		table_ref(f, &c, T_HOURLY);
		add_where(f, &c, q, T_HOURLY);
		sp_buf_adds(&c, ") FORMAT TabSeparated");
		int r = sp_fleet_sql(f, sp_buf_cstr(&c), NULL, 0, err);
		sp_buf_release(&c);
		if (r < 0)
			return -1;
		if (strcmp(sp_buf_cstr(&f->resp), "1\n")) {
			st->rollup_stale = 1;
			table = T_SAMPLES;
		}
	}
	*tablep = table;
	return nv;
}

/* The aggregate, by the server: a row per stack (and time bucket, and
 * host, as q->by asks) with the sum of each value column; into rows. */
static int query_aggregate(struct sp_fleet *f, const struct sp_fleet_query *q, int table, const struct column *cols,
			   int nv, struct sp_buf *rows, struct sp_err *err)
{
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_adds(&b, "SELECT stack");
	if (q->by & SP_FLEET_BY_TIME)
		sp_buf_adds(&b, ", toUInt32(bucket) AS t");
	if (q->by & SP_FLEET_BY_HOST)
		sp_buf_adds(&b, ", host");
	for (int i = 0; i < nv; i++) {
		sp_buf_adds(&b, ", toFloat64(sumIf(value, value_name = ");
		add_sqlstr(&b, cols[i].name, strlen(cols[i].name));
		sp_buf_adds(&b, "))");
	}
	sp_buf_adds(&b, " FROM ");
	table_ref(f, &b, table);
	add_where(f, &b, q, table);
	sp_buf_adds(&b, " GROUP BY stack");
	if (q->by & SP_FLEET_BY_TIME)
		sp_buf_adds(&b, ", t");
	if (q->by & SP_FLEET_BY_HOST)
		sp_buf_adds(&b, ", host");
	if (q->by & SP_FLEET_BY_TIME)
		sp_buf_adds(&b, " ORDER BY t");
	sp_buf_adds(&b, " FORMAT RowBinary");
	int rc = sp_fleet_sql(f, sp_buf_cstr(&b), NULL, 0, err);
	sp_buf_release(&b);
	if (rc < 0)
		return -1;
	/* kept: the next request reuses the answer buffer */
	sp_buf_add(rows, f->resp.p, f->resp.len);
	return 0;
}

/* The frames of the stacks in the range (the set computed by the server:
 * a list of ids would be an AST of as many elements), into f->resp. */
static int query_stacks(struct sp_fleet *f, const struct sp_fleet_query *q, int table, struct sp_err *err)
{
	/* (a dictionary of the first schema has no files and lines) */
	struct sp_buf b = SP_BUF_INIT;
	int rc = -1;
	sp_buf_addf(&b, "SELECT count() FROM system.columns WHERE database = '%s' AND table = 'stacks' AND name = 'lines'"
		    " FORMAT TabSeparated", f->db);
	if (sp_fleet_sql(f, sp_buf_cstr(&b), NULL, 0, err) < 0)
		goto out;
	int v1 = !strcmp(sp_buf_cstr(&f->resp), "0\n");
	sp_buf_reset(&b);
	sp_buf_adds(&b, v1 ? "SELECT id, any(frames) AS fr, any(kinds), arrayMap(x -> '', fr), arrayMap(x -> toUInt32(0), fr) FROM "
		    : "SELECT id, any(frames), any(kinds), any(files), any(lines) FROM ");
	table_ref(f, &b, T_STACKS);
	sp_buf_adds(&b, f->cluster ? " WHERE id GLOBAL IN (SELECT stack FROM " : " WHERE id IN (SELECT stack FROM ");
	table_ref(f, &b, table);
	add_where(f, &b, q, table);
	sp_buf_adds(&b, ") GROUP BY id FORMAT RowBinary");
	rc = sp_fleet_sql(f, sp_buf_cstr(&b), NULL, 0, err);
out:
	sp_buf_release(&b);
	return rc;
}

/* The answer of query_stacks: each row's stack into p, its node by stack
 * id in id2node. */
static int read_stacks(struct sp_fleet *f, struct sp_profile *p, struct sp_u64map *id2node, struct sp_err *err)
{
	struct rb_reader rd = (struct rb_reader){ (const unsigned char *)f->resp.p, (const unsigned char *)f->resp.p + f->resp.len, 0 };
	while (rd.p < rd.e && !rd.bad) {
		uint64_t id = rd_u64(&rd);
		uint64_t d = rd_varint(&rd);
		uint32_t node = 0;
		const unsigned char *kinds = NULL;
		struct rb_reader fr = rd;
		for (uint64_t i = 0; i < d && !rd.bad; i++) {
			size_t n;
			rd_str(&rd, &n);
		}
		if (rd_varint(&rd) != d || (uint64_t)(rd.e - rd.p) < d) {
			rd.bad = 1;
			break;
		}
		kinds = rd.p;
		rd.p += d;
		/* files and lines: d each, or none (a row of the first schema's
		 * dictionary, given the columns' default []) */
		uint64_t nf = rd_varint(&rd);
		struct rb_reader files = rd;
		for (uint64_t i = 0; i < nf && !rd.bad; i++) {
			size_t n;
			rd_str(&rd, &n);
		}
		uint64_t nl = rd_varint(&rd);
		if (rd.bad || (nf && nf != d) || (nl && nl != d) || (uint64_t)(rd.e - rd.p) < nl * 4) {
			rd.bad = 1;
			break;
		}
		const unsigned char *lines = rd.p;
		rd.p += nl * 4;
		for (uint64_t i = 0; i < d; i++) {
			size_t n, fn = 0;
			const char *s = rd_str(&fr, &n), *fl = nf ? rd_str(&files, &fn) : "";
			struct sp_frame fm;
			memset(&fm, 0, sizeof fm);
			fm.name = sp_str_intern(p, s, n);
			fm.kind = kinds[i] < SP_KIND_MAX ? kinds[i] : 0;
			fm.file = fn ? sp_str_intern(p, fl, fn) : 0;
			const unsigned char *l = lines + 4 * i;
			if (nl)
				fm.line = (uint32_t)l[0] | (uint32_t)l[1] << 8 | (uint32_t)l[2] << 16 | (uint32_t)l[3] << 24;
			node = sp_node_intern(p, node, sp_frame_intern(p, &fm));
		}
		int found;
		*sp_u64map_slot(id2node, id == UINT64_MAX ? id - 1 : id, &found) = node;
	}
	if (rd.bad)
		return sp_err_set(err, "%s: a malformed answer (%zu bytes)", f->urltext, f->resp.len);
	return 0;
}

/* The aggregate's rows as samples to a stream on out: a stack not in
 * the dictionary (its batch still in a spool) is named so and counted;
 * by host, the host is the stack's root frame. */
static int write_rows(const struct sp_fleet_query *q, const struct sp_buf *rows, int nv, struct sp_profile *p,
		      struct sp_u64map *id2node, FILE *out, struct sp_fleet_stats *st, struct sp_err *err)
{
	struct sp_writer *w = sp_writer_open(SP_OUT_BINARY, out, p, NULL, 0, err); /* flags 0: cannot fail */
	struct sp_sink *sink = sp_writer_sink(w);
	uint32_t *fr_buf = NULL;
	size_t fr_cap = 0;
	int rc = 0;
	struct rb_reader rd = (struct rb_reader){ (const unsigned char *)rows->p, (const unsigned char *)rows->p + rows->len, 0 };
	while (rd.p < rd.e && rc == 0) {
		struct sp_sample s;
		memset(&s, 0, sizeof s);
		s.time = SP_NO_TIME;
		uint64_t id = rd_u64(&rd);
		if (q->by & SP_FLEET_BY_TIME)
			s.time = (uint64_t)rd_u32(&rd) * 1000000000ULL;
		const char *host = NULL;
		size_t hn = 0;
		if (q->by & SP_FLEET_BY_HOST)
			host = rd_str(&rd, &hn);
		for (int i = 0; i < nv; i++)
			s.values[i] = rd_f64(&rd);
		int found;
		uint32_t node = sp_u64map_get(id2node, id == UINT64_MAX ? id - 1 : id, &found);
		if (!found) {
			char nm[64];
			snprintf(nm, sizeof nm, "[stack %016llx not in the dictionary]", (unsigned long long)id);
			st->missing_stacks++;
			node = sp_node_intern(p, 0, sp_frame_named(p, nm, strlen(nm), SP_KIND_SYNTHETIC));
			*sp_u64map_slot(id2node, id == UINT64_MAX ? id - 1 : id, &found) = node;
		}
		if (host) {
			uint32_t hnode = sp_node_intern(p, 0, sp_frame_named(p, host, hn, SP_KIND_SYNTHETIC));
			uint32_t dd = sp_node_frames(p, node, &fr_buf, &fr_cap);
			for (uint32_t i = 0; i < dd; i++)
				hnode = sp_node_intern(p, hnode, fr_buf[i]);
			node = hnode;
		}
		s.stack = node;
		if (sink->sample(sink, p, &s, err) < 0)
			rc = -1;
	}
	free(fr_buf);
	if (rc == 0 && sp_writer_finish(w, err) < 0)
		rc = -1;
	sp_writer_free(w);
	return rc;
}

int sp_fleet_get(struct sp_fleet *f, const struct sp_fleet_query *q, FILE *out, struct sp_fleet_stats *st,
		 struct sp_err *err)
{
	memset(st, 0, sizeof *st);
	if (store_schema(f, err) < 0)
		return -1;
	struct column cols[SP_MAX_VALUES];
	int table;
	int nv = pick_table(f, q, cols, &table, st, err);
	if (nv < 0)
		return -1;
	st->rollup = table == T_HOURLY;
	if (!nv)
		return no_samples(q, "", err);
	int rc = -1;
	struct sp_buf rows = SP_BUF_INIT;
	struct sp_profile *p = NULL;
	struct sp_u64map id2node;
	sp_u64map_init(&id2node);
	if (query_aggregate(f, q, table, cols, nv, &rows, err) < 0 || query_stacks(f, q, table, err) < 0)
		goto out;
	p = sp_profile_new();
	const char *names[SP_MAX_VALUES];
	for (int i = 0; i < nv; i++)
		names[i] = cols[i].name;
	sp_profile_set_values(p, nv, names);
	for (int i = 0; i < nv; i++)
		sp_profile_set_unit(p, i, cols[i].unit);
	sp_meta_add(p, "source", "pfleet");
	if (q->service)
		sp_meta_add(p, "service", q->service);
	if (read_stacks(f, p, &id2node, err) < 0)
		goto out;
	rc = write_rows(q, &rows, nv, p, &id2node, out, st, err);
out:
	if (p)
		sp_profile_free(p);
	sp_u64map_release(&id2node);
	sp_buf_release(&rows);
	return rc;
}

int sp_fleet_hosts(struct sp_fleet *f, const struct sp_fleet_query *q, FILE *out, struct sp_err *err)
{
	if (store_schema(f, err) < 0)
		return -1;
	struct column cols[SP_MAX_VALUES];
	int nv = slice_columns(f, q, T_SAMPLES, cols, err);
	if (nv < 0)
		return -1;
	if (!nv)
		return no_samples(q, "", err);
	int c = -1;
	for (int i = 0; i < nv; i++)
		if (q->value ? !strcmp(cols[i].name, q->value) : (c < 0 && sp_unit_is_time(cols[i].unit)))
			c = i;
	if (c < 0 && q->value)
		return sp_err_set(err, "--value %s: the slice's value columns are %s%s%s%s%s", q->value, cols[0].name,
				  nv > 1 ? ", " : "", nv > 1 ? cols[1].name : "", nv > 2 ? ", " : "", nv > 2 ? "..." : ""), -1;
	if (c < 0)
		c = 0;
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_adds(&b, "SELECT host, toFloat64(sumIf(value, stack ");
	sp_buf_adds(&b, f->cluster ? "GLOBAL IN" : "IN");
	sp_buf_adds(&b, " (SELECT id FROM ");
	table_ref(f, &b, T_STACKS);
	sp_buf_adds(&b, " WHERE has(frames, ");
	add_sqlstr(&b, q->function, strlen(q->function));
	sp_buf_adds(&b, ")))) AS in_f, toFloat64(sum(value)) AS total FROM ");
	table_ref(f, &b, T_SAMPLES);
	add_where(f, &b, q, T_SAMPLES);
	sp_buf_adds(&b, " AND value_name = ");
	add_sqlstr(&b, cols[c].name, strlen(cols[c].name));
	sp_buf_adds(&b, " GROUP BY host HAVING in_f > 0 ORDER BY in_f DESC, host FORMAT RowBinary");
	int rc = sp_fleet_sql(f, sp_buf_cstr(&b), NULL, 0, err);
	sp_buf_release(&b);
	if (rc < 0)
		return -1;
	if (!f->resp.len) {
		char what[300];
		snprintf(what, sizeof what, " in %s", q->function);
		return no_samples(q, what, err);
	}
	struct rb_reader rd = { (const unsigned char *)f->resp.p, (const unsigned char *)f->resp.p + f->resp.len, 0 };
	struct sp_buf line = SP_BUF_INIT, v = SP_BUF_INIT;
	fprintf(out, "%-24s %18s %18s %7s\n", "host", q->function, "host total", "share");
	while (rd.p < rd.e && !rd.bad) {
		size_t hn;
		const char *h = rd_str(&rd, &hn);
		double in = rd_f64(&rd), tot = rd_f64(&rd);
		if (rd.bad)
			break;
		sp_buf_reset(&line);
		sp_buf_addf(&line, "%-24.*s ", (int)hn, h);
		sp_buf_reset(&v);
		sp_buf_addvalue(&v, in, cols[c].unit);
		sp_buf_addf(&line, "%18s ", sp_buf_cstr(&v));
		sp_buf_reset(&v);
		sp_buf_addvalue(&v, tot, cols[c].unit);
		sp_buf_addf(&line, "%18s %6.2f%%\n", sp_buf_cstr(&v), tot > 0 ? 100 * in / tot : 0);
		fputs(sp_buf_cstr(&line), out);
	}
	sp_buf_release(&line);
	sp_buf_release(&v);
	if (rd.bad)
		return sp_err_set(err, "%s: a malformed answer (%zu bytes)", f->urltext, f->resp.len), -1;
	return 0;
}
