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
-- 3 inlined, 4 python, 5 synthetic).
CREATE TABLE IF NOT EXISTS stackpipe.stacks (
    id UInt64,
    frames Array(String),
    kinds Array(UInt8)
) ENGINE = ReplacingMergeTree() ORDER BY id;
-- One row per time bucket, host and stack for each value column of the
-- input (value_name "samples", "period", "cpu-ns" ... with its unit),
-- holding the bucket's sum.  Ordered for the queries: one service, an hour,
-- GROUP BY stack; batch names the insert that wrote the row, so a retry
-- after a lost answer can tell whether the first attempt landed (32 bits:
-- the question is asked only of the batch's time range, where another batch
-- with the same id is a chance of one in hundreds of millions; 64 bits cost
-- 1.2 more bytes a row on disk).
CREATE TABLE IF NOT EXISTS stackpipe.samples (
    bucket DateTime,
    service String,
    host String,
    labels Array(String),
    stack UInt64,
    value_name String,
    unit String,
    value Float64,
    batch UInt32
) ENGINE = MergeTree() PARTITION BY toDate(bucket)
  ORDER BY (service, toStartOfHour(bucket), stack, host, bucket);
-- Retention (ClickHouse 19.6 and later; 18.16 has no TTL: pfleet init says
-- so and pfleet prune drops the days older than --ttl instead):
-- TTL: ALTER TABLE stackpipe.samples MODIFY TTL bucket + INTERVAL 30 DAY;
-- Sharding (pfleet init --cluster NAME, after pfleet init on every shard;
-- NAME is a cluster of the server's remote_servers):
-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.samples_dist AS stackpipe.samples ENGINE = Distributed(NAME, stackpipe, samples, sipHash64(host));
-- CLUSTER: CREATE TABLE IF NOT EXISTS stackpipe.stacks_dist AS stackpipe.stacks ENGINE = Distributed(NAME, stackpipe, stacks, id);
