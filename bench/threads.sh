#!/usr/bin/env bash
# Front-end thread scaling (issue 16), with wrk (Debian's package, installed when missing) so the load
# generator is never the ceiling. For each thread count in THREADS, Flagwire (demo data,
# FLAGWIRE_HTTP_THREADS=N, one eval worker per front-end thread) and a uWS hello world with as many
# threads built the same way (bench/hello-server.ts --threads N) run on the SERVER_CPUS cores; wrk runs
# on WRK_CPUS (taskset, disjoint). Scenarios: (a) GET /v1/flags/{id}, (b) the same on a group flag
# with env, (d) GET /api/v1/flags/{id} with a read token, (g) OFREP POST for (a)'s flag.
# Printed per run: req/s, p99, the ratio to the hello world, and the server's CPU per request (every
# thread's utime + stime from /proc) with the busiest thread's share.
#
#   npm run build && bench/threads.sh                       # 2 cores: THREADS="1 2", 1 core each side
#   THREADS="1 2 4 8" SERVER_CPUS=0-7 WRK_CPUS=8-15 WRK_THREADS=8 CONNS="64 256" bench/threads.sh
#   ROUNDS=10 SCENARIOS=a THREADS=1 bench/threads.sh       # hello world and (a) ten times in turn: the median ratio
#   EVAL_WORKERS=6 THREADS=2 SERVER_CPUS=0-7 ... bench/threads.sh   # another split of the server's cores
#
# By default each front-end thread gets one eval worker (FLAGWIRE_EVAL_WORKERS=N), so N threads keep 2N
# threads busy on SERVER_CPUS; EVAL_WORKERS sets the workers for every N instead (at least one a thread).
#
# With ROUNDS=N the hello world and the scenarios run N times in turn on the same servers, and each
# scenario's ratio to the hello world's CPU per request is printed as a median with its range: on a
# shared machine one run's ratio moves by a tenth or more. Before each round the host's speed is probed
# for 2 s on SERVER_CPUS, idle (scripts/host-speed.mjs: the 2-core machine's memory is sometimes half as
# fast, and a round's ratio moves with it), and printed as the probe's CPU ms.
#
# With PERF=1 every run is also recorded by perf (Linux's, from Debian's linux-perf) and broken down by
# activity in microseconds of CPU per request (bench/perf-breakdown.ts): where Flagwire's time goes
# beyond the hello world's (issue 30). Recording costs some CPU: compare the breakdowns with each other,
# the plain runs' figures with each other.
#
# Only 127.0.0.1; every server is stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
threads_list=${THREADS:-"1 2"}
server_cpus=${SERVER_CPUS:-0}
wrk_cpus=${WRK_CPUS:-1}
wrk_threads=${WRK_THREADS:-1}
conns=${CONNS:-"64"}
scenarios=${SCENARIOS:-"a b d g"}
dur=${DUR:-8}
rounds=${ROUNDS:-1}
warmup=${WARMUP:-3}
perf=${PERF:-0}
command -v wrk >/dev/null || "$(dirname "$0")/../scripts/ensure.sh" apt wrk
if [[ $perf == 1 ]]; then command -v perf >/dev/null || "$(dirname "$0")/../scripts/ensure.sh" apt linux-perf; fi

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
work=$(mktemp -d)
# JS frames are named in perf's report only when V8 writes its map (/tmp/perf-PID.map).
node_flags=(); [[ $perf == 1 ]] && node_flags=(--perf-basic-prof --no-logfile-per-isolate "--logfile=$work/v8.log")
cpu_of() { cat /proc/"$1"/task/*/stat 2>/dev/null | awk '{s += $14 + $15} END {print s}'; }
busiest() { # pid -> ticks of the busiest thread
  cat /proc/"$1"/task/*/stat 2>/dev/null | awk '{t = $14 + $15; if (t > m) m = t} END {print m + 0}'
}
wait_for() { for _ in $(seq 200); do grep -q 'listening' "$1" 2>/dev/null && return 0; sleep 0.2; done; echo "no start: $1" >&2; cat "$1" >&2; exit 1; }

lua="$work/post.lua"
printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
  "'{\"context\":{\"targetingKey\":\"user-42\",\"plan\":\"beta\"}}'" > "$lua"

run() { # label pid url conns [lua] -> prints one line, sets $rps and $cpr (CPU us per request)
  local c0 b0 c1 b1 out n script=()
  [[ -n ${5:-} ]] && script=(-s "$5")
  local rec=
  if [[ $perf == 1 ]]; then
    perf record -q -F 2000 -g -p "$2" -o "$work/perf.data" 2>/dev/null & rec=$!
    sleep 0.5
  fi
  c0=$(cpu_of "$2"); b0=$(busiest "$2")
  out=$(taskset -c "$wrk_cpus" wrk -t"$wrk_threads" -c"$4" -d"${dur}s" --latency "${script[@]}" "$3")
  c1=$(cpu_of "$2"); b1=$(busiest "$2")
  if [[ -n $rec ]]; then kill -INT "$rec"; wait "$rec" 2>/dev/null || true; fi
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  cpr=$(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", c * 1e6 / hz / n}')
  printf '%-34s %10s req/s  p99 %8s  CPU/request %6s us  busiest thread %5s%%  non-2xx %s\n' "$1" "$rps" \
    "$(awk '$1 == "99%" {print $2}' <<<"$out")" "$cpr" \
    "$(awk -v b=$((b1 - b0)) -v d="$dur" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f", b * 100 / hz / d}')" \
    "$(awk '/Non-2xx/ {print $NF}' <<<"$out" | grep . || echo 0)"
  if [[ -n $rec ]]; then
    perf script -F +pid -i "$work/perf.data" 2>/dev/null | node dist/bench/perf-breakdown.js --requests "$n" --period-us 500 | sed 's/^/    /'
  fi
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, node $(node -v), eval workers ${EVAL_WORKERS:-one per thread}, server on CPUs $server_cpus, wrk -t$wrk_threads on CPUs $wrk_cpus, ${dur}s runs"
port=18400
for n in $threads_list; do
  port=$((port + 2))
  data="$work/data-$n"
  # The sync service off: its fixed port would refuse the start while any other node holds it.
  FLAGWIRE_HTTP_THREADS=$n FLAGWIRE_EVAL_WORKERS=${EVAL_WORKERS:-$n} FLAGWIRE_LOG_LEVEL=warn FLAGWIRE_RATE_LIMIT=1000000000 FLAGWIRE_SYNC_PORT=0 \
    taskset -c "$server_cpus" node "${node_flags[@]}" dist/src/cli/cli.js serve --demo --port "$port" --data "$data" >"$work/fw-$n.out" 2>&1 &
  fw=$!; pids+=("$fw")
  wait_for "$work/fw-$n.out"
  flag=$(grep -o 'v1/flags/flg_[A-Za-z0-9_-]*' "$work/fw-$n.out" | head -1)
  flag_id=${flag##*/}
  read_secret=$(awk '/demo-read/ {print $NF; exit}' "$work/fw-$n.out")
  project=$(awk '/project / {print $2; exit}' "$work/fw-$n.out")
  group=$(FLAGWIRE_DATA="$data" node dist/src/cli/cli.js flag list prj_DemoPlatform --json 2>/dev/null \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const f=JSON.parse(s).flags[0];process.stdout.write(f?f.id:"")})')
  # The hello world answers with (a)'s own body and revision, so the two send the same bytes.
  answer=$(curl -sf -D "$work/answer-head" "http://127.0.0.1:$port/$flag?targetingKey=user-42&plan=beta") ||
    { echo "(a)'s route did not answer 200: $(cat "$work/answer-head")" >&2; exit 1; }
  revision=$(awk -F': ' 'tolower($1) == "flagwire-revision" {print $2 + 0}' "$work/answer-head")
  taskset -c "$server_cpus" node "${node_flags[@]}" dist/bench/hello-server.js --port $((port + 1)) --threads "$n" \
    --body "$answer" --revision "$revision" >"$work/hello-$n.out" 2>&1 &
  hello=$!; pids+=("$hello")
  wait_for "$work/hello-$n.out"
  base="http://127.0.0.1:$port"
  for c in $conns; do
    # Unmeasured: each route's first seconds (JIT, the engine's caches) would count against it.
    for url in "http://127.0.0.1:$((port + 1))/x" "$base/$flag?targetingKey=user-42&plan=beta"; do
      taskset -c "$wrk_cpus" wrk -t"$wrk_threads" -c"$c" -d"${warmup}s" "$url" >/dev/null
    done
    declare -A ratios=()
    ratio() { # scenario: prints this run's ratios, and keeps the CPU one for the rounds' median
      awk -v a="$rps" -v b="$h" -v c="$cpr" -v d="$hc" \
        'BEGIN {printf "    = %.2f of the hello world'\''s req/s, %.2fx its CPU per request\n", a / b, c / d}'
      ratios[$1]+="$(awk -v c="$cpr" -v d="$hc" 'BEGIN {printf "%.3f", c / d}') "
    }
    printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$read_secret" > "$work/auth.lua"
    { cat "$lua"; printf 'wrk.headers["X-Flagwire-Project"] = "%s"\n' "$project"; } > "$work/ofrep.lua"
    for ((round = 1; round <= rounds; round++)); do
      echo "host speed before round $round: $(taskset -c "$server_cpus" node scripts/host-speed.mjs 2 | tail -1)"
      run "hello world, $n thread(s), $c conns" "$hello" "http://127.0.0.1:$((port + 1))/x" "$c"; h=$rps; hc=$cpr
      for s in $scenarios; do
        case $s in
          a) run "(a) $n thread(s), $c conns" "$fw" "$base/$flag?targetingKey=user-42&plan=beta" "$c"; ratio a ;;
          b) if [[ -n $group ]]; then run "(b) $n thread(s), $c conns" "$fw" "$base/v1/flags/$group?targetingKey=user-42&env=production" "$c"; ratio b; fi ;;
          d) run "(d) $n thread(s), $c conns" "$fw" "$base/api/v1/flags/$flag_id" "$c" "$work/auth.lua"; ratio d ;;
          g) run "(g) $n thread(s), $c conns" "$fw" "$base/ofrep/v1/evaluate/flags/$flag_id" "$c" "$work/ofrep.lua"; ratio g ;;
          *) echo "unknown scenario $s (a, b, d, g)" >&2; exit 2 ;;
        esac
      done
    done
    if ((rounds > 1)); then
      for s in "${!ratios[@]}"; do
        tr ' ' '\n' <<<"${ratios[$s]}" | grep . | sort -n | awk -v s="$s" -v n="$n" -v c="$c" '{v[NR] = $1}
          END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
               printf "(%s) %s thread(s), %s conns: median %.2fx the hello world'\''s CPU per request over %d rounds (%.2f-%.2f)\n", s, n, c, m, NR, v[1], v[NR]}'
      done
    fi
    unset ratios
  done
  kill "$fw" "$hello"; wait "$fw" "$hello" 2>/dev/null || true
done
