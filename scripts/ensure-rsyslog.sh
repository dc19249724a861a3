#!/bin/sh
# Installs Debian's rsyslog and its RELP input (rsyslog-relp) for the audit stream's black-box tests
# (test/audit-stream/rsyslog.test.ts, test/audit-stream/relp.test.ts) and its bench, which run rsyslogd
# in the foreground with a config of their own (imtcp or imrelp, omfile): never the system's service.
# Idempotent and quiet: does nothing when rsyslogd and imrelp are there.
set -e
relp() { ls /usr/lib/*/rsyslog/imrelp.so /usr/lib/rsyslog/imrelp.so 2>/dev/null | grep -q .; }
[ -x /usr/sbin/rsyslogd ] && relp && exit 0
"$(dirname "$0")/apt-install.sh" rsyslog rsyslog-relp
[ -x /usr/sbin/rsyslogd ] && relp
