#!/bin/sh
# Installs Debian's jq for the README walk-through's test (test/server/readme-examples.test.ts), which
# runs the walk-through's shell blocks as pasted: they read JSON answers with jq. Idempotent and quiet:
# does nothing when jq is on PATH.
set -e
command -v jq >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends jq >/dev/null
command -v jq >/dev/null 2>&1
