#!/bin/sh
# Installs Debian's rsyslog for the audit stream's black-box test (test/audit-stream/rsyslog.test.ts) and
# its bench, which run rsyslogd in the foreground with a config of their own (imtcp, omfile): never the
# system's service. Idempotent and quiet: does nothing when rsyslogd is there.
set -e
command -v rsyslogd >/dev/null 2>&1 && exit 0
[ -x /usr/sbin/rsyslogd ] && exit 0
"$(dirname "$0")/apt-install.sh" rsyslog
[ -x /usr/sbin/rsyslogd ]
