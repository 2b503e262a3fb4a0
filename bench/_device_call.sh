# Sourced first by the device_round*.sh scripts, each one call of the `device` tool: prepares the GPU machine
# (.device/setup.sh, its line in $OUT/setup.txt), the Vulkan backend the README advises, and the call's time budget:
# S (the start), B (env BUDGET, else the script's default, $1), `left [MARGIN]` (seconds the budget leaves, less MARGIN,
# default 5) and `cap N` (N seconds, or what the budget leaves if less); `report FILE` prints a test run's summaries,
# the processes that died and every error report, and `task_test fast|spec` runs `deno task test` (DENOGPU_TEST_JOBS=4)
# with that read path within what the budget leaves, and reports it.
source .device/setup.sh > "$OUT/setup.txt" 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 DENO_WEBGPU_BACKEND=vulkan
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
S=$(date +%s)
B=${BUDGET:-${1:-570}}
left() { echo $(( B - ($(date +%s) - S) - ${1:-5} )); }
cap() { local l=$(( B - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
report() {
  grep -E '^(ok|FAILED) \||^suite:.*(status|signal)|^== ' "$1" | tail -24
  sed -n '/^ ERRORS $/,/^ FAILURES $/p' "$1" | head -80
}
task_test() {
  local t0
  t0=$(date +%s)
  DENOGPU_TEST_FAST_READS=$([ "$1" = fast ] && echo 1) DENOGPU_TEST_JOBS=4 \
    timeout -k 5 "$(left 10)" deno task test > "$OUT/$1.txt" 2>&1
  echo "== deno task test, $1 reads: rc $? after $(( $(date +%s) - t0 )) s" >> "$OUT/$1.txt"
  report "$OUT/$1.txt"
  rm -f "$OUT/$1.txt"
}
