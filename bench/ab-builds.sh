#!/usr/bin/env bash
# A/B of two builds on scenario (a)'s route, GET /v1/flags/{id} (the demo's first flag), with wrk:
#   bench/ab-builds.sh BASE_CHECKOUT NEW_CHECKOUT      (each built: dist/ present)
# Each build serves its own fresh demo data dir; runs alternate ABBA so drift hits both alike. Printed
# per run: req/s, and the server's CPU per request (utime + stime of every thread, from /proc), which
# is what a change to the request path moves; req/s on a shared 2-core machine swings more than that;
# wrk's p99, and the server's resident memory after the run (VmRSS), to check that neither grew.
# Settings: ROUNDS (6), DUR seconds per run (6), CONN connections (50), SERVER_CPUS (0) and WRK_CPUS
# (1): both servers run on SERVER_CPUS and wrk on WRK_CPUS (taskset), so the server's CPU per request is
# not diluted by the generator's. wrk is Debian's package, installed when missing. Only 127.0.0.1;
# both servers are stopped by pid at the end. The sync service is off in both (FLAGWIRE_SYNC_PORT=0): two
# builds that serve it would both ask for its default port, and the second would not start.
set -euo pipefail
base=${1:?usage: bench/ab-builds.sh BASE_CHECKOUT NEW_CHECKOUT}
new=${2:?usage: bench/ab-builds.sh BASE_CHECKOUT NEW_CHECKOUT}
rounds=${ROUNDS:-6}; dur=${DUR:-6}; conn=${CONN:-50}
server_cpus=${SERVER_CPUS:-0}; wrk_cpus=${WRK_CPUS:-1}
command -v wrk >/dev/null || "$(dirname "$0")/../scripts/ensure.sh" apt wrk

# start() runs in a process substitution (a subshell): it prints its server's pid, which the trap kills.
pa=; pb=
trap 'kill $pa $pb 2>/dev/null || true' EXIT
start() { # checkout port -> prints the server's pid and the flag URL
  local dir; dir=$(mktemp -d)
  local cli="$1/dist/src/cli/cli.js"
  [ -f "$cli" ] || cli="$1/dist/src/console/cli.js" # builds before the CLI's folder was renamed
  FLAGWIRE_LOG_LEVEL=warn FLAGWIRE_RATE_LIMIT=1000000000 FLAGWIRE_SYNC_PORT=0 taskset -c "$server_cpus" node "$cli" serve --demo --port "$2" --data "$dir/data" >"$dir/out" 2>&1 &
  for _ in $(seq 150); do grep -q 'listening' "$dir/out" 2>/dev/null && break; sleep 0.2; done
  echo "$! http://127.0.0.1:$2/$(grep -o 'v1/flags/flg_[A-Za-z0-9_-]*' "$dir/out" | head -1)"
}
read -r pa ua < <(start "$base" 18301)
read -r pb ub < <(start "$new" 18302)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # label pid url
  local c0 c1 out n
  c0=$(cpu "$2"); out=$(taskset -c "$wrk_cpus" wrk -t1 -c"$conn" -d"${dur}s" --latency "$3?targetingKey=user-$RANDOM&plan=beta"); c1=$(cpu "$2")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  cpr=$(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", c * 1e6 / hz / n}')
  printf '%-5s req/s %9s  server CPU/request %6s us  p99 %8s  RSS %4s MB  non-2xx %s\n' "$1" \
    "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" "$cpr" "$(awk '$1 == "99%" {print $2}' <<<"$out")" \
    "$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$2/status")" "$(awk '/Non-2xx/ {print $NF}' <<<"$out" | grep . || echo 0)"
}
# Each round's two runs are neighbours in time, so their ratio is what a drifting shared machine
# disturbs least: the summary is the median of the rounds' new/base CPU per request.
ratios=()
# Unmeasured warm-up of both (JIT, caches).
taskset -c "$wrk_cpus" wrk -t1 -c"$conn" -d3s "$ua" >/dev/null; taskset -c "$wrk_cpus" wrk -t1 -c"$conn" -d3s "$ub" >/dev/null
for r in $(seq "$rounds"); do
  if ((r % 2)); then
    run base "$pa" "$ua"; b=$cpr; run new "$pb" "$ub"; n=$cpr
  else
    run new "$pb" "$ub"; n=$cpr; run base "$pa" "$ua"; b=$cpr
  fi
  ratios+=("$(awk -v n="$n" -v b="$b" 'BEGIN {printf "%.3f", n / b}')")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR] = $1} END {
  m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
  printf "new/base CPU per request: median %.3f over %d rounds (min %.3f, max %.3f)\n", m, NR, r[1], r[NR]
}'
