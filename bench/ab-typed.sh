#!/usr/bin/env bash
# A/B of two flags on one server, GET /v1/flags/{id} with the same query: the demo's first flag (boolean:
# an audience and a percentage) against a flag with typed variants and the five-rule targeting tree of
# bench/five-rule-flag.ts, imported as a flagd file (issue 25, item 6). The query carries every
# attribute the rules read and leads them to the last rule, `fractional` by an attribute:
#   bench/ab-typed.sh                (a build: dist/ present)
# Runs alternate ABBA; printed per run: req/s, and the server's CPU per request (utime + stime of every
# thread, from /proc). Settings: ROUNDS (6), DUR seconds per run (6), CONN connections (50). wrk is
# Debian's package, installed when missing. Only 127.0.0.1; the server is stopped by pid at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-6}; dur=${DUR:-6}; conn=${CONN:-50}
command -v wrk >/dev/null || scripts/ensure.sh apt wrk
dir=$(mktemp -d)
pid=
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
node --input-type=module -e "
import { kFiveRuleTargeting, kFiveRuleVariants } from './dist/bench/five-rule-flag.js';
const flag = { state: 'ENABLED', variants: kFiveRuleVariants, defaultVariant: 'control', targeting: kFiveRuleTargeting };
process.stdout.write(JSON.stringify({ flags: { 'five-rules': flag } }));" >"$dir/flags.json"
FLAGWIRE_LOG_LEVEL=warn FLAGWIRE_RATE_LIMIT=1000000000 node dist/src/cli/cli.js serve --demo --port 18303 --data "$dir/data" >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 150); do grep -q 'listening' "$dir/out" 2>/dev/null && break; sleep 0.2; done
boolean=$(grep -o 'v1/flags/flg_[A-Za-z0-9_-]*' "$dir/out" | head -1)
typed=v1/flags/$(node dist/src/cli/cli.js flags import prj_DemoWebShop --file "$dir/flags.json" --data "$dir/data" --json |
  node -e 'process.stdin.on("data", (d) => process.stdout.write(JSON.parse(d).flags[0].id))')
query='targetingKey=user-4242&plan=beta&userId=user-4242&version=2.3.1&country=US&email=someone%40example.com&tier=free'
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
run() { # label path
  local c0 c1 out n
  c0=$(cpu); out=$(wrk -t1 -c"$conn" -d"${dur}s" "http://127.0.0.1:18303/$2?$query"); c1=$(cpu)
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  printf '%-7s req/s %9s  server CPU/request %6s us  non-2xx %s\n' "$1" "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" \
    "$(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", c * 1e6 / hz / n}')" \
    "$(awk '/Non-2xx/ {print $NF}' <<<"$out" | grep . || echo 0)"
}
curl -s "http://127.0.0.1:18303/$typed?$query"; echo
for r in $(seq "$rounds"); do
  if ((r % 2)); then run boolean "$boolean"; run typed "$typed"; else run typed "$typed"; run boolean "$boolean"; fi
done
