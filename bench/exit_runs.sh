#!/usr/bin/env bash
# Runs small programs that end a process holding worker clients, each many
# times in its own `deno run` process, and counts how each process ended: exit
# 0 with the case's "done" line and no Worker thread left at `unload` (ok), a
# hang (the per-run limit reached), a native crash (exit 134 abort, 139
# segfault) or another failure. The programs are the cases of
# tests/worker/_exit_cases.ts (`EXIT_CASE=<name> deno run --allow-all ...`).
# Ends with "N passed, N failed" over cases; a case passes when every run is ok.
#
# On the GPU machine (the `device` tool, carry [".device"]):
#   source .device/setup.sh && bash bench/exit_runs.sh
# Env: RUNS (per case, default 50), JOBS (processes at once, default 4),
#      BACKEND (DENO_WEBGPU_BACKEND for the runs: default vulkan, what the README advises; empty
#      leaves it unset, which starts every backend, GL included, and made several Workers hang at exit),
#      LIMIT (seconds per run, default 60), CASES (space-separated names,
#      default the five of issue 28), OUT (logs, default /tmp/denogpu-exit).
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-50}"
JOBS="${JOBS:-4}"
LIMIT="${LIMIT:-60}"
OUT="${OUT:-/tmp/denogpu-exit}"
CASES="${CASES:-compileError validationError allReduceThree destroyWithReadsPending mainAndWorker}"
mkdir -p "$OUT/logs"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg}" NO_COLOR=1 DENO_NO_UPDATE_CHECK=1
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
backend="${BACKEND-vulkan}"
if [ -n "$backend" ]; then export DENO_WEBGPU_BACKEND="$backend"; else unset DENO_WEBGPU_BACKEND; fi

# one CASE RUN: runs it once; prints "CASE RUN VERDICT RC SECONDS".
one() {
  local name="$1" run="$2" log="$OUT/logs/$1.$2.txt" start rc verdict
  start=$(date +%s%N)
  EXIT_CASE="$name" timeout -k 5 "$LIMIT" deno run --no-check --allow-all tests/worker/_exit_cases.ts > "$log" 2>&1
  rc=$?
  if [ "$rc" = 0 ] && grep -q "case $name done" "$log" && grep -q "no worker thread at unload" "$log"; then
    verdict=ok
  else
    case "$rc" in
      0) verdict=incomplete ;;
      124 | 137) verdict=hang ;;
      134 | 139) verdict=crash ;;
      *) verdict=fail ;;
    esac
  fi
  printf '%s %s %s %s %s\n' "$name" "$run" "$verdict" "$rc" "$(( ($(date +%s%N) - start) / 1000000 ))"
}
export -f one
export OUT LIMIT

deno cache tests/worker/_exit_cases.ts > /dev/null 2>&1
start=$(date +%s)
for name in $CASES; do for run in $(seq 1 "$RUNS"); do echo "$name $run"; done; done |
  xargs -P "$JOBS" -n 2 bash -c 'one "$@"' _ > "$OUT/runs.txt"
passed=0
failed=0
for name in $CASES; do
  lines="$(grep "^$name " "$OUT/runs.txt")"
  total=$(echo "$lines" | grep -c .)
  ok=$(echo "$lines" | grep -c " ok ")
  ms=$(echo "$lines" | awk '{s += $5} END {printf "%.0f", s / NR}')
  others="$(echo "$lines" | grep -v " ok " | awk '{print $3 " (rc " $4 ", run " $2 ")"}' | head -5 | tr '\n' ';')"
  printf '%-26s %3d/%-3d ok, mean %5d ms%s\n' "$name" "$ok" "$total" "$ms" "${others:+  not ok: $others}"
  if [ "$ok" = "$total" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "exit runs: $(date -u +%FT%TZ), $(deno --version | head -1), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi'), backend ${backend:-unset}, RUNS=$RUNS, JOBS=$JOBS, $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
