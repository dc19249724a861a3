#!/usr/bin/env bash
# The long run of the crash-safety and fuzz tests (issue 8). FLAGWIRE_LONG=1 makes
#   test/reliability/crash-server.test.ts   50 kill -9 trials of the server (CI: 20)
#   test/reliability/crash-console.test.ts  50 kills of console commands after they opened the store (CI: 20)
#   test/reliability/fuzz-management.test.ts 50,000 generated requests (CI: 8,000)
#   test/reliability/fuzz-eval.test.ts      40,000 generated requests (CI: 5,000)
# Each count can be set on its own: FLAGWIRE_CRASH_TRIALS, FLAGWIRE_CONSOLE_KILLS, FLAGWIRE_FUZZ_RUNS (both
# fuzz files); FLAGWIRE_FUZZ_SEED replays a fuzz run. The files run one at a time, so the kill timing
# and the fuzzers do not compete for the CPU; each prints its figures (trials, losses, requests, 5xx).
# Usage: scripts/reliability-long.sh [test file ...]   (default: the four above)
set -euo pipefail
cd "$(dirname "$0")/.."

npm run build

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  files=(crash-server crash-console fuzz-management fuzz-eval)
fi
paths=()
for f in "${files[@]}"; do
  f=${f##*/}
  f=${f%.ts}
  f=${f%.js}
  f=${f%.test}
  paths+=("dist/test/reliability/${f}.test.js")
done

# Every file's whole output (its comment lines are the figures), one file at a time, the per-file bound
# lifted for the long run.
FLAGWIRE_LONG=1 FLAGWIRE_TEST_OUTPUT=all FLAGWIRE_TEST_JOBS=1 FLAGWIRE_TEST_EXTRA_JOBS=0 TAP_TIMEOUT=3600 node scripts/run-tests.mjs "${paths[@]}"
