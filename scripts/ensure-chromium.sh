#!/bin/sh
# Installs Debian's chromium for the web console's browser tests (test/web-console) when it is missing.
# playwright-core drives it through executablePath; we do not use Playwright's own browser downloads,
# which fetch from a CDN at test time. Idempotent and quiet: does nothing when /usr/bin/chromium exists.
set -e
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
[ -x /usr/bin/chromium ]
