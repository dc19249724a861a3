#!/usr/bin/env bash
# Several Flagwire nodes on one machine, sharing a private PostgreSQL: what docs/deployment.md's "Several nodes"
# walk-through runs. Nothing else is needed: Debian's PostgreSQL is installed when missing
# (`scripts/ensure.sh postgres`), and its cluster lives in the cluster folder, on its own port, not as a
# system service.
#
#   scripts/cluster.sh start [N]   PostgreSQL, then N nodes (default 2) on ports 8081, 8082, ..., their
#                                  sync services (flagd's, and the relays') on 8015, 8016, ...; the first
#                                  starts with --demo, so an empty database gets the demo data. A start
#                                  that fails stops what it started (the nodes, PostgreSQL) and exits 1
#   scripts/cluster.sh stop        every node (SIGTERM: they drain), then PostgreSQL; the data stays, and
#                                  `start` again serves it. Says each process it stopped (or that none ran)
#   scripts/cluster.sh destroy     stop, then remove the cluster folder, saying so
#
# Settings (environment): FLAGWIRE_CLUSTER_DIR (default ./cluster), FLAGWIRE_CLUSTER_PG_PORT (5433),
# FLAGWIRE_CLUSTER_PORT (8081, the first node's HTTP port), FLAGWIRE_CLUSTER_SYNC_PORT (8015, the first
# node's sync port; 0: no node serves one). Every port a node opens is its own: node i takes each base
# plus i - 1. The nodes are the repository's build
# (`npm install` makes it). PostgreSQL refuses to run as root: as root, it runs as Debian's `postgres` user.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${FLAGWIRE_CLUSTER_DIR:-cluster}")
pg_port=${FLAGWIRE_CLUSTER_PG_PORT:-5433}
first_port=${FLAGWIRE_CLUSTER_PORT:-8081}
first_sync_port=${FLAGWIRE_CLUSTER_SYNC_PORT:-8015}
url="postgres://flagwire:flagwire@127.0.0.1:${pg_port}/flagwire"
cli="$repo/dist/src/cli/cli.js"

usage() { echo "usage: scripts/cluster.sh start [N] | stop | destroy" >&2; exit 2; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Whether the node on `port` answers GET /ready with 200: one request over bash's own /dev/tcp. A node
# process per probe (every 0.2 s while a node starts) cost 0.17-0.38 CPU s each on a 2-core machine.
ready() {
  local line=''
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET /ready HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$1" >&3
  read -r -t 10 line <&3 || true
  exec 3<&-
  [[ $line == 'HTTP/1.1 200 '* ]]
}

# Waits until a node answers /ready with 200 (its copy has caught up); prints its log when it dies.
wait_ready() {
  local port=$1 pidfile=$2 log=$3
  for _ in $(seq 1 600); do
    if ! alive "$pidfile"; then echo "node on port $port exited; its log ($log):" >&2; cat "$log" >&2; return 1; fi
    if ready "$port"; then return 0; fi
    sleep 0.2
  done
  echo "node on port $port not ready after 120 s; see $log" >&2
  return 1
}

start_postgres() {
  local bin
  bin=$("$repo/scripts/ensure.sh" postgres)
  mkdir -p "$dir/pg"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir/pg"
    if ! runuser -u postgres -- test -w "$dir/pg"; then
      echo "PostgreSQL runs as the postgres user, which cannot reach $dir: set FLAGWIRE_CLUSTER_DIR to a folder it can reach" >&2
      exit 1
    fi
  fi
  if [ ! -f "$dir/pg/data/PG_VERSION" ]; then
    as_pg "$bin/initdb" -D "$dir/pg/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
  fi
  if ! as_pg "$bin/pg_ctl" -D "$dir/pg/data" status >/dev/null 2>&1; then
    started_pg=1
    as_pg "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" -w -t 60 \
      -o "-p $pg_port -k $dir/pg -c listen_addresses=127.0.0.1" start >/dev/null
  fi
  # The role and database the nodes use: a role that owns its database is all Flagwire needs.
  local psql=(as_pg "$bin/psql" -h "$dir/pg" -p "$pg_port" -U postgres -d postgres -qtA -v ON_ERROR_STOP=1)
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'flagwire'")" ]; then
    "${psql[@]}" -c "CREATE ROLE flagwire LOGIN PASSWORD 'flagwire'"
  fi
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'flagwire'")" ]; then
    "${psql[@]}" -c "CREATE DATABASE flagwire OWNER flagwire"
  fi
}

# What this `start` started, stopped again if it fails: the pid files of its nodes, and whether it
# started PostgreSQL (a node or a PostgreSQL that already ran is left running).
started_nodes=()
started_pg=0

start_node() {
  local i=$1 port=$((first_port + $1 - 1)) sync_port=0 extra=()
  local pidfile="$dir/node-$i.pid" log="$dir/node-$i.log"
  # Each node its own sync port: every node serves the sync service, on FLAGWIRE_SYNC_PORT (default 8015).
  if [ "$first_sync_port" -ne 0 ]; then sync_port=$((first_sync_port + i - 1)); fi
  if alive "$pidfile"; then echo "node $i already runs (pid $(cat "$pidfile"), port $port)"; return 0; fi
  if [ "$i" -eq 1 ]; then extra=(--demo); fi
  FLAGWIRE_SYNC_PORT=$sync_port node "$cli" serve --port "$port" --host 127.0.0.1 --data "$dir/node-$i" --database "$url" "${extra[@]}" >"$log" 2>&1 &
  echo $! >"$pidfile"
  started_nodes+=("$pidfile")
  wait_ready "$port" "$pidfile" "$log"
  local sync="no sync service"
  if [ "$sync_port" -ne 0 ]; then sync="sync 127.0.0.1:$sync_port"; fi
  echo "node $i: http://127.0.0.1:$port, $sync (pid $(cat "$pidfile"), data $dir/node-$i, log $log)"
}

# How many processes stop_node and stop_postgres stopped.
stopped=0

# SIGTERM to the node of a pid file, awaited: it drains, writes its last usage counts and exits; a loaded
# machine can take a while.
stop_node() {
  local pidfile=$1 pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then echo "node pid $pid has not exited 120 s after SIGTERM; see its log in $dir" >&2; return 1; fi
    echo "stopped $(basename "$pidfile" .pid) (pid $pid)"
    stopped=$((stopped + 1))
  fi
  rm -f "$pidfile"
}

stop_postgres() {
  local pid
  [ -f "$dir/pg/data/postmaster.pid" ] || return 0
  pid=$(head -1 "$dir/pg/data/postmaster.pid")
  as_pg "$("$repo/scripts/ensure.sh" postgres)/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null || true
  # pg_ctl returns once the pid file is gone, a moment before the postmaster has exited.
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  echo "stopped PostgreSQL (pid $pid)"
  stopped=$((stopped + 1))
}

# Says what it stopped, or that nothing ran: a silent stop leaves one guessing whether it did anything.
stop_all() {
  local pidfile
  if [ ! -d "$dir" ]; then echo "no cluster at $dir: nothing to stop"; return 0; fi
  for pidfile in "$dir"/node-*.pid; do stop_node "$pidfile" || exit 1; done
  stop_postgres
  if [ "$stopped" -eq 0 ]; then echo "nothing was running in $dir"; fi
}

# A failed start leaves nothing of its own running: its nodes, the last first, then its PostgreSQL.
undo_failed_start() {
  local status=$?
  [ "$status" -ne 0 ] || return 0
  trap - EXIT
  set +e
  echo "start failed: stopping what it started" >&2
  local n
  for ((n = ${#started_nodes[@]} - 1; n >= 0; n--)); do stop_node "${started_nodes[n]}"; done
  if [ "$started_pg" -eq 1 ]; then stop_postgres; fi
  exit "$status"
}

case "${1:-}" in
  start)
    nodes=${2:-2}
    [[ "$nodes" =~ ^[1-9][0-9]?$ ]] || usage
    [[ "$first_port" =~ ^[1-9][0-9]*$ && "$first_sync_port" =~ ^[0-9]+$ ]] || {
      echo "FLAGWIRE_CLUSTER_PORT and FLAGWIRE_CLUSTER_SYNC_PORT must be port numbers" >&2
      exit 2
    }
    [ -f "$cli" ] || { echo "no build at $cli: run npm install first" >&2; exit 1; }
    trap undo_failed_start EXIT
    start_postgres
    # The console's own copy: console commands pointed at it with FLAGWIRE_DATA reach every node.
    mkdir -p "$dir/console"
    for i in $(seq 1 "$nodes"); do start_node "$i"; done
    grep -h -A30 '^Demo data seeded' "$dir/node-1.log" 2>/dev/null | sed -n '1,/^Find the ids/p' || true
    echo "PostgreSQL: $url (its files and log in $dir/pg)"
    echo "Console commands reach every node through it:"
    echo "  export FLAGWIRE_DATABASE_URL=$url FLAGWIRE_DATA=$dir/console"
    echo "Stop: scripts/cluster.sh stop"
    trap - EXIT
    ;;
  stop)
    stop_all
    if [ -d "$dir" ]; then echo "its data stays in $dir: scripts/cluster.sh start serves it again, destroy removes it"; fi
    ;;
  destroy)
    stop_all
    if [ -d "$dir" ]; then rm -rf "$dir"; echo "removed $dir"; fi
    ;;
  *) usage ;;
esac
