#!/bin/sh
# Installs Debian's chromium-headless-shell for the web console's browser tests (test/web-console) when
# it is missing (test/helpers/web-console.ts says why the shell, not the full browser). playwright-core
# drives it through executablePath; we do not use Playwright's own browser downloads, which fetch from a
# CDN at test time. Idempotent and quiet: does nothing when the shell exists.
set -e
kShell=/usr/lib/chromium/chromium-headless-shell
[ -x "$kShell" ] && exit 0
"$(dirname "$0")/apt-install.sh" chromium-headless-shell
[ -x "$kShell" ]
