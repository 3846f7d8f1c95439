-- The fleet store of stackpipe (pfleet(1)), for ClickHouse 18.16 and later.
-- pfleet init applies it (with the database renamed by --database); by hand:
--   clickhouse-client --multiquery < share/fleet/schema.sql
-- Every statement is idempotent.  Times are UTC.
CREATE DATABASE IF NOT EXISTS stackpipe;
-- The stack dictionary, content-addressed: id is the 64-bit xxh3 chain of
-- the stack's frames (pfleet(1), STACK IDS), the same on every host, so a
-- stack is stored once for the fleet; duplicates sent by several hosts merge
-- in the background and readers take any() of an id.  frames are root
-- first; kinds are the stream's frame kinds (0 native, 1 kernel, 2 jit,
-- 3 inlined, 4 python, 5 synthetic); files and lines their source file
-- and line ('' and 0: unknown), as a Python frame's "dumps
-- (json/__init__.py:231)" (schema 2; pfleet init adds them to a
-- dictionary of the first schema).
CREATE TABLE IF NOT EXISTS stackpipe.stacks (
    id UInt64,
    frames Array(String),
    kinds Array(UInt8),
    files Array(String),
    lines Array(UInt32)
) ENGINE = ReplacingMergeTree() ORDER BY id;
-- One row per time bucket, host and stack for each value column of the
-- input (value_name "samples", "period", "cpu-ns" ... with its unit),
-- holding the bucket's sum as an integer (the unit carries the scale: ns,
-- bytes, samples; a value that is not whole is rounded, and put says how
-- many were).  Schema 3, laid out for bytes on disk (ClickHouse 18.16 has
-- no column codecs) and for the queries: ordered by service, hour, host,
-- stack, so that one host's or a few hosts' rows are a range of the key
-- and each column holds long runs; the bucket is its hour, minute and
-- second; the value, exact over all of Int64, is split into its four low
-- bytes and its high 32 bits (value_hi, sign included), each a column of
-- its own, as a byte shuffle: a column of low bytes and one of mostly
-- zero high bits compress far better than 8-byte integers (on the
-- bench's fleet, zstd: 2.7 bytes a value against 3.2).  bucket and value
-- are ALIAS columns, computed when read.  batch names the insert that
-- wrote the row, so a retry after a lost answer can tell whether the first
-- attempt landed (32 bits: the question is asked only of the batch's time
-- range, where another batch with the same id is a chance of one in
-- hundreds of millions).  The first schema's value was Float64, the
-- second's an Int64 column and bucket a DateTime column ordered
-- (service, hour, stack, host, bucket); pfleet init and put name what to
-- do with such a store (pfleet(1), SCHEMA VERSIONS).
CREATE TABLE IF NOT EXISTS stackpipe.samples (
    hour DateTime,
    minute UInt8,
    second UInt8,
    service String,
    host String,
    labels Array(String),
    stack UInt64,
    value_name String,
    unit String,
    value0 UInt8,
    value1 UInt8,
    value2 UInt8,
    value3 UInt8,
    value_hi Int32,
    batch UInt32,
    bucket DateTime ALIAS hour + minute * 60 + second,
    value Int64 ALIAS toInt64(value_hi) * 4294967296 + value3 * 16777216 + value2 * 65536 + value1 * 256 + value0
) ENGINE = MergeTree() PARTITION BY toDate(hour)
  ORDER BY (service, hour, host, stack, minute, second);
-- The hourly rollup: the samples of each hour summed over hosts (labels
-- kept), a plain table written by pfleet put (schema 3): each batch of
-- sample rows is followed by an insert of its sums per hour, labels, value
-- column and stack, under the same batch id (a retry after a lost answer
-- asks whether it landed, as for the samples).  pfleet get reads it instead
-- of samples when the range is whole hours, with no --host and no --by:
-- one service's hour is then about as many rows as distinct stacks, not
-- hosts x buckets x stacks.  Rows of an hour merge in the background;
-- readers sum() them (batch keeps one of the merged rows' ids).  rows
-- counts the samples rows summed into a row: get compares a range's
-- sum(rows) with the samples' count() (a put cut between a batch's two
-- inserts leaves the rollup short until its spool is sent).
CREATE TABLE IF NOT EXISTS stackpipe.samples_hourly (
    hour DateTime,
    service String,
    labels Array(String),
    stack UInt64,
    value_name String,
    unit String,
    value Int64,
    rows UInt64,
    batch UInt32
) ENGINE = SummingMergeTree((value, rows)) PARTITION BY toDate(hour)
  ORDER BY (service, hour, value_name, unit, labels, stack);
-- Retention (ClickHouse 19.6 and later; 18.16 has no TTL: pfleet init says
-- so and pfleet prune drops the days older than --ttl instead, of both tables):
-- TTL: ALTER TABLE stackpipe.samples MODIFY TTL hour + INTERVAL 30 DAY;
-- TTL: ALTER TABLE stackpipe.samples_hourly MODIFY TTL hour + INTERVAL 30 DAY;
-- Sharding (pfleet init --cluster NAME, after pfleet init on every shard;
-- NAME is a cluster of the server's remote_servers):
-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.samples_dist AS stackpipe.samples ENGINE = Distributed(NAME, stackpipe, samples, sipHash64(host));
-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.stacks_dist AS stackpipe.stacks ENGINE = Distributed(NAME, stackpipe, stacks, id);
-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.samples_hourly_dist AS stackpipe.samples_hourly ENGINE = Distributed(NAME, stackpipe, samples_hourly, rand());
