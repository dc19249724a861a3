#!/bin/sh
# Installs Debian's jq for the README walk-through's test (test/server/readme-examples.test.ts), which
# runs the walk-through's shell blocks as pasted: they read JSON answers with jq. Idempotent and quiet:
# does nothing when jq is on PATH.
set -e
command -v jq >/dev/null 2>&1 && exit 0
"$(dirname "$0")/apt-install.sh" jq
command -v jq >/dev/null 2>&1
