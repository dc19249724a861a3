#!/usr/bin/env bash
# Makes sure Prometheus's server binary is installed: the release-plan guard tests start a private
# Prometheus from it (test/helpers/prometheus.ts) scraping a real Flagwire and a test exporter. Installs
# Debian's package when missing; prints the binary's path.
set -euo pipefail

if ! bin=$(command -v prometheus); then
  "$(dirname "$0")/apt-install.sh" prometheus
  # Debian's package starts a system Prometheus (port 9090); the tests run their own, so it is stopped.
  if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then systemctl stop prometheus || true; fi
  if [ -x /etc/init.d/prometheus ]; then /etc/init.d/prometheus stop >/dev/null 2>&1 || true; fi
  bin=$(command -v prometheus)
fi
echo "$bin"
