# tests/fleet/ch.sh — start and stop private clickhouse-server processes for
# the pfleet tests and bench (sourced).  Each server runs as this user on
# 127.0.0.1 with its own temporary data directory and ports, and a cluster
# "fleet" naming every server started so far (the Distributed test's shards).
#
#   ch_available           true, or prints why not (the caller skips)
#   ch_start DIR HTTP TCP  start a server; waits until it answers (60 s)
#   ch_start_free DIR      the same on free ports (random, tried again when
#                          taken), which it leaves in CH_HTTP and CH_TCP; the
#                          cluster "fleet" is this server and the servers
#                          whose TCP ports are in CH_SHARDS
#   ch_stop DIR            stop it (SIGTERM, then SIGKILL after 20 s)
#   ch_stop_all            stop every server started here (call from the EXIT trap)
# Every query is logged in system.query_log (tests count what a server received).
CH_DIRS=""
CH_SHARDS=""
ch_available() {
	if ! command -v clickhouse-server > /dev/null 2>&1 && [ ! -x /usr/sbin/clickhouse-server ]; then
		echo "clickhouse-server is not installed (make deps: apt-get install clickhouse-server clickhouse-client)"; return 1
	fi
	return 0
}
ch_bin() { command -v clickhouse-server 2> /dev/null || echo /usr/sbin/clickhouse-server; }
# ch_config DIR HTTP TCP: the config.xml of one server.  CH_SHARDS lists the
# TCP ports of every shard of the "fleet" cluster; CH_COMPRESSION=zstd sets
# the server's compression method of every part (default lz4); CH_TIMEZONE
# the server's time zone (default the system's).
ch_config() {
	local d=$1 http=$2 tcp=$3 p shards="" comp=""
	[ -n "${CH_COMPRESSION:-}" ] && comp="
  <compression><case><min_part_size>0</min_part_size><min_part_size_ratio>0</min_part_size_ratio><method>$CH_COMPRESSION</method></case></compression>"
	[ -n "${CH_TIMEZONE:-}" ] && comp="$comp
  <timezone>$CH_TIMEZONE</timezone>"
	for p in $tcp $CH_SHARDS; do
		shards="$shards<shard><replica><host>127.0.0.1</host><port>$p</port></replica></shard>"
	done
	cat > "$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/log/server.log</log><errorlog>$d/log/server.err.log</errorlog><console>0</console></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
  <remote_servers><fleet>$shards</fleet></remote_servers>$comp
</yandex>
XML
	cat > "$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage><max_threads>2</max_threads><log_queries>1</log_queries></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
XML
}
ch_start() {
	local d=$1 http=$2 tcp=$3 i
	# a server already listening there would answer our pings
	if (exec 3<> "/dev/tcp/127.0.0.1/$http") 2> /dev/null || (exec 3<> "/dev/tcp/127.0.0.1/$tcp") 2> /dev/null; then
		return 3
	fi
	mkdir -p "$d/log" "$d/data" "$d/tmp"
	# a try before on other ports left its 'Address already in use':
	# every later try would read it as its own
	rm -f "$d/log/stdout" "$d/log/server.err.log" "$d/log/server.log"
	ch_config "$d" "$http" "$tcp"
	"$(ch_bin)" --config-file="$d/config.xml" > "$d/log/stdout" 2>&1 &
	echo $! > "$d/pid"
	CH_DIRS="$CH_DIRS $d"
	for i in $(seq 1 600); do
		grep -q 'Address already in use' "$d/log/stdout" "$d/log/server.err.log" 2> /dev/null && { ch_stop "$d"; return 3; }
		if curl -fsS "http://127.0.0.1:$http/ping" > /dev/null 2>&1; then return 0; fi
		kill -0 "$(cat "$d/pid")" 2> /dev/null || { echo "clickhouse-server exited at start:"; tail -5 "$d/log/stdout" "$d/log/server.err.log" 2> /dev/null; return 1; }
		sleep 0.1
	done
	echo "clickhouse-server did not answer on port $http within 60 s"; return 1
}
ch_start_free() {
	local d=$1 try r why
	for try in 1 2 3 4 5 6; do
		CH_HTTP=$((20000 + RANDOM % 20000)); CH_TCP=$((CH_HTTP + 20000))
		mkdir -p "$d"
		ch_start "$d" "$CH_HTTP" "$CH_TCP" > "$d/start.why" 2>&1; r=$?
		[ $r = 0 ] && return 0
		why=$(cat "$d/start.why")
		# taken ports (3), or a server that exited or did not answer (a
		# port taken between the check and its bind, by the servers other
		# tests start at the same time): tried again on other ports, the
		# reasons said when every try failed
		ch_stop "$d"
		[ $r = 3 ] && why="ports $CH_HTTP/$CH_TCP taken"
		echo "  try $try: $why" | head -8
	done
	echo "  clickhouse-server did not start in 6 tries"; return 1
}
ch_stop() {
	local d=$1 pid i
	[ -f "$d/pid" ] || return 0
	pid=$(cat "$d/pid")
	kill "$pid" 2> /dev/null || { rm -f "$d/pid"; return 0; }
	for i in $(seq 1 200); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2> /dev/null || :
	wait "$pid" 2> /dev/null || :
	rm -f "$d/pid"
}
ch_stop_all() { local d; for d in $CH_DIRS; do ch_stop "$d"; done; }
# ch_query HTTP SQL: run SQL, print the result (TabSeparated).
ch_query() { curl -sS --data-binary "$2" "http://127.0.0.1:$1/"; }

# ch_test_server WHAT: a test file's one private server: every server
# stopped at exit, the file skipped (exit 0, saying why) without ClickHouse,
# a failed start one "not ok"; sets U (its HTTP URL) and PFLEET_SPOOL.
ch_test_server() {
	trap 'ch_stop_all; sp_cleanup' EXIT
	local why
	why=$(ch_available) || { skip "$1" "$why"; exit 0; }
	ch_start_free "$T/ch" > "$T/start" || { notok "clickhouse-server starts"; cat "$T/start"; exit 0; }
	U=http://127.0.0.1:$CH_HTTP
	export PFLEET_SPOOL=$T/spool
	export TMPDIR=$T # put's per-host lock files, removed with the rest
}
