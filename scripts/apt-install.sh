#!/bin/sh
# Installs Debian packages (quietly, without recommends), as root or through sudo. The ensure-*.sh
# scripts call it only when what they need is missing.
set -e
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
