#!/bin/sh
# Installs Debian's chromium for the web console's browser tests (test/web-console) when it is missing.
# playwright-core drives it through executablePath; we do not use Playwright's own browser downloads,
# which fetch from a CDN at test time. Idempotent and quiet: does nothing when /usr/bin/chromium exists.
set -e
[ -x /usr/bin/chromium ] && exit 0
"$(dirname "$0")/apt-install.sh" chromium
[ -x /usr/bin/chromium ]
