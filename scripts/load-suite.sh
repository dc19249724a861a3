#!/usr/bin/env bash
# Runs a command (default: npm test) beside eight busy loops, four pinned to each of CPUs 0 and 1: the
# load the suite must pass under (issue 41: load 10-15 on a 2-core machine, other jobs on both cores).
# Prints the command's elapsed time and ends the loops (by PID) when it ends, fails or is interrupted.
#   scripts/load-suite.sh                                       # the whole suite
#   scripts/load-suite.sh node scripts/run-tests.mjs dist/test/cli
# Exit status: the command's (130 or 143 when interrupted).
set -u
if [ "$#" -eq 0 ]; then set -- npm test; fi

loops=()
command_pid=
stop_loops() {
  if [ "${#loops[@]}" -gt 0 ]; then kill "${loops[@]}" 2>/dev/null; wait "${loops[@]}" 2>/dev/null; fi
  loops=()
}
# Ctrl-C reaches the command itself (same process group); a signal sent to this script alone is passed
# on to the command as SIGTERM (a background command ignores SIGINT).
interrupted() {
  if [ -n "$command_pid" ]; then kill -TERM "$command_pid" 2>/dev/null; wait "$command_pid" 2>/dev/null; fi
  exit "$1"
}
trap stop_loops EXIT
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

for cpu in 0 1; do
  for _ in 1 2 3 4; do
    taskset -c "$cpu" sh -c 'while :; do :; done' &
    loops+=("$!")
  done
done
echo "# load-suite: ${#loops[@]} busy loops (4 on CPU 0, 4 on CPU 1): PIDs ${loops[*]}" >&2

started=$(date +%s)
# In the background so that this script's traps run at once (bash runs them only between commands),
# its standard input kept.
"$@" <&0 &
command_pid=$!
wait "$command_pid"
code=$?
command_pid=
elapsed=$(($(date +%s) - started))
echo "# load-suite: '$*' exit ${code} after ${elapsed} s ($((elapsed / 60)) min $((elapsed % 60)) s) beside ${#loops[@]} busy loops; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit "$code"
