#!/usr/bin/env bash
# Installs Debian's package for what a test, a bench or the image build needs, only when it is missing
# (idempotent and quiet), as root or through sudo:
#   ensure.sh postgres    PostgreSQL's server binaries (test/helpers/postgres.ts, cluster.sh); prints their folder
#   ensure.sh prometheus  Prometheus's server (test/helpers/prometheus.ts); prints its path
#   ensure.sh chromium    chromium-headless-shell (test/helpers/web-console.ts says why the shell)
#   ensure.sh rsyslog     rsyslogd and its RELP input (test/helpers/rsyslog.ts)
#   ensure.sh jq          jq (the README walk-through's tests read JSON answers with it)
#   ensure.sh apt PKG...  the packages named (bench/'s wrk and perf, image.sh's buildah)
# The tests start their own PostgreSQL, Prometheus and rsyslogd: a system service a package starts is stopped.
set -euo pipefail

apt_install() {
  local sudo=
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  # One install at a time among ours (apt's list lock does not wait); DPkg::Lock::Timeout waits for
  # others', so test files run in parallel that ask at once wait instead of failing.
  exec 9>"${TMPDIR:-/tmp}/flagwire-apt-install.lock"
  flock 9
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
  exec 9>&-
}

pg_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

relp() { compgen -G '/usr/lib/*/rsyslog/imrelp.so' >/dev/null || [ -e /usr/lib/rsyslog/imrelp.so ]; }

kShell=/usr/lib/chromium/chromium-headless-shell

case "${1:-}" in
  postgres)
    if ! bindir=$(pg_bindir); then
      apt_install postgresql
      if command -v pg_ctlcluster >/dev/null; then
        for cluster in $(pg_lsclusters -h 2>/dev/null | awk '{print $1"/"$2}'); do pg_ctlcluster "${cluster%/*}" "${cluster#*/}" stop || true; done
      fi
      bindir=$(pg_bindir)
    fi
    echo "$bindir"
    ;;
  prometheus)
    if ! bin=$(command -v prometheus); then
      apt_install prometheus
      if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then systemctl stop prometheus || true; fi
      if [ -x /etc/init.d/prometheus ]; then /etc/init.d/prometheus stop >/dev/null 2>&1 || true; fi
      bin=$(command -v prometheus)
    fi
    echo "$bin"
    ;;
  chromium)
    [ -x "$kShell" ] || apt_install chromium-headless-shell
    [ -x "$kShell" ]
    ;;
  rsyslog)
    { [ -x /usr/sbin/rsyslogd ] && relp; } || apt_install rsyslog rsyslog-relp
    [ -x /usr/sbin/rsyslogd ] && relp
    ;;
  jq)
    command -v jq >/dev/null 2>&1 || apt_install jq
    command -v jq >/dev/null 2>&1
    ;;
  apt)
    shift
    apt_install "$@"
    ;;
  *)
    echo "usage: $0 postgres | prometheus | chromium | rsyslog | jq | apt PACKAGE..." >&2
    exit 2
    ;;
esac
