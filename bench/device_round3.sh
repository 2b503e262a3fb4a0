#!/usr/bin/env bash
# An H200 round for issues 18, 20 and 21 after the worker client landed:
# PART=a: the worker client's event-loop gap, launch rates and Deno.bench
# groups, collectives with worker clients, and the interleaved static and
# indirect launch breakdowns; PART=b: the whole test suite, start/destroy
# cycles of worker clients, and the churn ratio. Writes under $OUT (log.txt).
# Used with the device tool:
#   carry [".device"], command "source .device/setup.sh && PART=a bash bench/device_round3.sh"
HEADER_EXTRA="PART=${PART:-a}"
source "$(dirname "$0")/_device_log.sh"
if [ "${PART:-a}" = a ]; then
  step "worker gap"; REPS=3 timeout 120 deno run --allow-env --allow-read --allow-write bench/worker_gap.ts >> "$log" 2>&1
  step "worker encode, 1 buffer"; timeout 60 deno run --allow-env --allow-read bench/worker_encode.ts >> "$log" 2>&1
  step "worker encode, 4 buffers + info"; INFO=1 timeout 60 deno run --allow-env --allow-read bench/worker_encode.ts >> "$log" 2>&1
  step "worker bench"; timeout 100 deno bench --allow-env --allow-read bench/worker_bench.ts >> "$log" 2>&1
  step "collectives with worker clients"
  for s in "16 4" "64 4" "64 2"; do set -- $s; MIB=$1 DEVICES=$2 REPS=9 timeout 60 deno run --allow-env --allow-read bench/collectives_workers.ts >> "$log" 2>&1; done
  step "static launches until submitted, interleaved (gaps shape, N=20000)"
  SHAPE=add3 SUBMIT=1 N=20000 REPS=30 SWEEP=256,512,1024,2048 timeout 100 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  step "indirect launches (createCount) until submitted, interleaved (N=20000)"
  SHAPE=add3 INDIRECT=1 SUBMIT=1 N=20000 REPS=20 SWEEP=512 timeout 80 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
else
  # The suite takes more than 300 s on the H200's host: two halves, each within one call's limit.
  flags="--v8-flags=--expose-gc --allow-env --allow-read --allow-write --allow-run"
  step "tests, first half"
  timeout 280 deno test $flags tests/client tests/collective tests/errors_test.ts tests/graph tests/imports_test.ts \
    tests/kernel tests/loop_budget_test.ts tests/memory tests/model > "$OUT/tests.txt" 2>&1
  tail -3 "$OUT/tests.txt" >> "$log"
  step "tests, second half"
  timeout 280 deno test $flags tests/profile tests/regression tests/server tests/soak tests/stream tests/tune tests/worker \
    > "$OUT/tests2.txt" 2>&1
  tail -3 "$OUT/tests2.txt" >> "$log"
  grep -hE "FAILED|=> " "$OUT/tests.txt" "$OUT/tests2.txt" | head -20 >> "$log"
  step "worker cycles"; RUNS="${RUNS:-10}" CYCLES=20 timeout 200 bash bench/worker_cycles.sh >> "$log" 2>&1
  step "worker cycles, the resident set every 50"; CYCLES=300 EVERY=50 timeout 120 deno run --allow-env --allow-read \
    --v8-flags=--expose-gc bench/worker_cycles.ts >> "$log" 2>&1
  step "churn"; timeout 40 deno run --allow-env bench/churn.ts >> "$log" 2>&1
fi
step "done"
