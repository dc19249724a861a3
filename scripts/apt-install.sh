#!/bin/sh
# Installs Debian packages (quietly, without recommends), as root or through sudo. The ensure-*.sh
# scripts call it only when what they need is missing. Test files run in parallel may ask at once: apt
# waits for the other's lock instead of failing.
set -e
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
# One install at a time among ours (apt's list lock does not wait); DPkg::Lock::Timeout waits for others'.
exec 9>"${TMPDIR:-/tmp}/flagwire-apt-install.lock"
flock 9
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
