#!/usr/bin/env bash
# Counts native crashes of worker clients ended with work in flight: runs
# bench/worker_cycles.ts in RUNS processes (default 30) of CYCLES cycles each
# (default 20), then one process of 200 cycles for the memory figures, and
# prints every exit status that was not 0 (139 is a segfault, 134 an abort).
# Usage: bash bench/worker_cycles.sh   (env: RUNS, CYCLES, DENO)
set -uo pipefail
DENO="${DENO:-deno}"
RUNS="${RUNS:-30}"
CYCLES="${CYCLES:-20}"
bad=0
codes=""
for i in $(seq 1 "$RUNS"); do
  CYCLES="$CYCLES" "$DENO" run --allow-env --allow-read bench/worker_cycles.ts > /tmp/worker_cycles.$$.log 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    bad=$((bad + 1))
    codes="$codes $rc"
    tail -3 /tmp/worker_cycles.$$.log
  fi
done
echo "worker_cycles: $bad of $RUNS processes of $CYCLES cycles exited non-zero${codes:+ (exit codes:$codes)}"
CYCLES=200 "$DENO" run --allow-env --allow-read --v8-flags=--expose-gc bench/worker_cycles.ts 2>&1 | tail -1
echo "200-cycle process exit status: ${PIPESTATUS[0]}"
rm -f /tmp/worker_cycles.$$.log
