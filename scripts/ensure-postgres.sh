#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (initdb, pg_ctl, postgres) are installed: the multi-node
# tests start a private cluster from them (test/helpers/postgres.ts). Installs Debian's package when
# missing; prints the binaries' directory.
set -euo pipefail

find_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

if ! bindir=$(find_bindir); then
  "$(dirname "$0")/apt-install.sh" postgresql
  # Debian's package starts a system cluster; the tests run their own, so it is stopped.
  if command -v pg_ctlcluster >/dev/null; then
    for cluster in $(pg_lsclusters -h 2>/dev/null | awk '{print $1"/"$2}'); do pg_ctlcluster ${cluster%/*} ${cluster#*/} stop || true; done
  fi
  bindir=$(find_bindir)
fi
echo "$bindir"
