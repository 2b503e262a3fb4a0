#!/usr/bin/env bash
# An H200 round for issues 17, 18, 20 and 21: PART=a: the launch/replay A/B
# against a copy of this very tree (a control: what the A/B reads when nothing
# changed) and against the tree before the API redesign, and the churn ratio
# over 20 seeds; PART=b: all-reduce with worker clients (with and without fast
# reads) at 2 and 4 devices, and the worker client's resident set every 50
# start/destroy cycles; PART=c: the static and indirect launch breakdowns and
# the tests of the parts this round changed. Writes under $OUT (log.txt).
# Prepare the trees first:
#   mkdir -p .device/self && git archive HEAD mod.ts src deno.json | tar -x -C .device/self
#   (.device/old: the same from 288acb5)
# Used with the device tool:
#   carry [".device"], command "source .device/setup.sh && PART=a bash bench/device_round4.sh"
HEADER_EXTRA="PART=${PART:-a}"
source "$(dirname "$0")/_device_log.sh"
if [ "${PART:-a}" = a ]; then
  for tree in self old self old; do
    step "A/B against .device/$tree (L=10)"
    OLD=.device/$tree L=10 ROUNDS="${ROUNDS:-20}" timeout 110 deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -3 >> "$log"
  done
  step "churn, 20 seeds"
  MEMORY=compact SEEDS=$(seq -s, 1 20) timeout 60 deno run --allow-env bench/churn.ts 2>&1 | tail -1 >> "$log"
elif [ "${PART:-a}" = c ]; then
  step "static launches until submitted, interleaved (gaps shape, N=20000)"
  SHAPE=add3 SUBMIT=1 N=20000 REPS=30 timeout 100 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  step "indirect launches (createCount) until submitted, interleaved (N=20000)"
  SHAPE=add3 INDIRECT=1 SUBMIT=1 N=20000 REPS=20 timeout 80 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  flags="--v8-flags=--expose-gc --allow-env --allow-read --allow-write --allow-run"
  step "tests: worker, collective, memory, stream, server"
  timeout 300 deno test $flags tests/worker tests/collective tests/memory tests/stream tests/server > "$OUT/tests.txt" 2>&1
  tail -3 "$OUT/tests.txt" >> "$log"
  grep -hE "FAILED|=> " "$OUT/tests.txt" | head -20 >> "$log"
else
  step "collectives with worker clients"
  for s in ${SIZES:-"16 2" "64 2" "16 4" "64 4"}; do
    set -- $s
    MIB=$1 DEVICES=$2 REPS=9 timeout 80 deno run --allow-env --allow-read bench/collectives_workers.ts >> "$log" 2>&1
  done
  step "worker cycles, the resident set every 50"; CYCLES=300 EVERY=50 timeout 150 deno run --allow-env --allow-read \
    --v8-flags=--expose-gc bench/worker_cycles.ts >> "$log" 2>&1
fi
step "done"
