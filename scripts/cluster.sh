#!/usr/bin/env bash
# Several Flagwire nodes on one machine, sharing a private PostgreSQL: what docs/deployment.md's "Several nodes"
# walk-through runs. Nothing else is needed: Debian's PostgreSQL is installed when missing
# (scripts/ensure-postgres.sh), and its cluster lives in the cluster folder, on its own port, not as a
# system service.
#
#   scripts/cluster.sh start [N]   PostgreSQL, then N nodes (default 2) on ports 8081, 8082, ...; the first
#                                  starts with --demo, so an empty database gets the demo data
#   scripts/cluster.sh stop        every node (SIGTERM: they drain), then PostgreSQL; the data stays, and
#                                  `start` again serves it
#   scripts/cluster.sh destroy     stop, then remove the cluster folder
#
# Settings (environment): FLAGWIRE_CLUSTER_DIR (default ./cluster), FLAGWIRE_CLUSTER_PG_PORT (5433),
# FLAGWIRE_CLUSTER_PORT (8081, the first node's port). The nodes are the repository's build
# (`npm install` makes it). PostgreSQL refuses to run as root: as root, it runs as Debian's `postgres` user.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${FLAGWIRE_CLUSTER_DIR:-cluster}")
pg_port=${FLAGWIRE_CLUSTER_PG_PORT:-5433}
first_port=${FLAGWIRE_CLUSTER_PORT:-8081}
url="postgres://flagwire:flagwire@127.0.0.1:${pg_port}/flagwire"
cli="$repo/dist/src/cli/cli.js"

usage() { echo "usage: scripts/cluster.sh start [N] | stop | destroy" >&2; exit 2; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Waits until a node answers /ready with 200 (its copy has caught up); prints its log when it dies.
wait_ready() {
  local port=$1 pidfile=$2 log=$3
  for _ in $(seq 1 600); do
    if ! alive "$pidfile"; then echo "node on port $port exited; its log ($log):" >&2; cat "$log" >&2; return 1; fi
    if node -e "fetch('http://127.0.0.1:$port/ready').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"; then return 0; fi
    sleep 0.2
  done
  echo "node on port $port not ready after 120 s; see $log" >&2
  return 1
}

start_postgres() {
  local bin
  bin=$("$repo/scripts/ensure-postgres.sh")
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

start_node() {
  local i=$1 port=$((first_port + $1 - 1)) extra=()
  local pidfile="$dir/node-$i.pid" log="$dir/node-$i.log"
  if alive "$pidfile"; then echo "node $i already runs (pid $(cat "$pidfile"), port $port)"; return 0; fi
  if [ "$i" -eq 1 ]; then extra=(--demo); fi
  node "$cli" serve --port "$port" --host 127.0.0.1 --data "$dir/node-$i" --database "$url" "${extra[@]}" >"$log" 2>&1 &
  echo $! >"$pidfile"
  wait_ready "$port" "$pidfile" "$log"
  echo "node $i: http://127.0.0.1:$port (pid $(cat "$pidfile"), data $dir/node-$i, log $log)"
}

stop_all() {
  local pidfile pid
  for pidfile in "$dir"/node-*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    # SIGTERM: the node drains, writes its last usage counts and exits; a loaded machine can take a while.
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then echo "node pid $pid has not exited 120 s after SIGTERM; see its log in $dir" >&2; exit 1; fi
    fi
    rm -f "$pidfile"
  done
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    pid=$(head -1 "$dir/pg/data/postmaster.pid")
    as_pg "$("$repo/scripts/ensure-postgres.sh")/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null || true
    # pg_ctl returns once the pid file is gone, a moment before the postmaster has exited.
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
}

case "${1:-}" in
  start)
    nodes=${2:-2}
    [[ "$nodes" =~ ^[1-9][0-9]?$ ]] || usage
    [ -f "$cli" ] || { echo "no build at $cli: run npm install first" >&2; exit 1; }
    start_postgres
    # The console's own copy: console commands pointed at it with FLAGWIRE_DATA reach every node.
    mkdir -p "$dir/console"
    for i in $(seq 1 "$nodes"); do start_node "$i"; done
    grep -h -A30 '^Demo data seeded' "$dir/node-1.log" 2>/dev/null | sed -n '1,/^Find the ids/p' || true
    echo "PostgreSQL: $url (its files and log in $dir/pg)"
    echo "Console commands reach every node through it:"
    echo "  export FLAGWIRE_DATABASE_URL=$url FLAGWIRE_DATA=$dir/console"
    echo "Stop: scripts/cluster.sh stop"
    ;;
  stop) stop_all ;;
  destroy) stop_all; rm -rf "$dir" ;;
  *) usage ;;
esac
