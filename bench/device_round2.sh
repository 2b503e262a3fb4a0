#!/usr/bin/env bash
# An H200 round for issues 17–22: the A/B against the code before this
# session, the launch gaps with a tasksMax sweep and a per-launch breakdown,
# churn, downloads, fast reads, autotune and collectives. Writes everything
# under $OUT (log.txt). Used with the device tool:
#   carry [".device"], command "source .device/setup.sh && bash bench/device_round2.sh"
# PART=a (default) or PART=b (tests both ways, the collective tests).
source "$(dirname "$0")/_device_log.sh"
{
  deno eval 'const a = await navigator.gpu.requestAdapter(); const l = a.limits; console.log(JSON.stringify({ maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxBufferSize: l.maxBufferSize, minStorageBufferOffsetAlignment: l.minStorageBufferOffsetAlignment, minUniformBufferOffsetAlignment: l.minUniformBufferOffsetAlignment }))'
} >> "$log" 2>&1
if [ "${PART:-a}" = a ]; then
  step "A/B trees L=10 (OLD = 288acb5, before this session)"
  OLD=.device/old L=10 ROUNDS=20 timeout 100 deno run --allow-env --allow-read bench/ab_trees.ts >> "$log" 2>&1
  step "gaps bench (default tasksMax)"; timeout 90 deno bench --allow-env bench/gaps_bench.ts >> "$log" 2>&1
  for t in 256 1024 2048 4096; do
    step "gaps static, TASKS_MAX=$t"
    TASKS_MAX=$t ONLY=1 timeout 40 deno bench --allow-env bench/gaps_bench.ts 2>&1 | grep -E "floor|client|faster|slower" >> "$log"
  done
  step "launch breakdown add3"; SHAPE=add3 REPS=100 timeout 40 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  step "launch breakdown add3, until submitted"; SHAPE=add3 SUBMIT=1 REPS=100 timeout 40 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  step "churn"; timeout 60 deno run --allow-env bench/churn.ts >> "$log" 2>&1
  step "transfer bench"; timeout 90 deno bench --allow-env bench/transfer_bench.ts >> "$log" 2>&1
  step "download breakdown"; timeout 60 deno run --allow-env --allow-read bench/download_breakdown.ts >> "$log" 2>&1
  step "download breakdown, hugetlb"; GLIBC_TUNABLES=glibc.malloc.hugetlb=1 timeout 60 deno run --allow-env --allow-read bench/download_breakdown.ts >> "$log" 2>&1
  step "fast reads bench"; timeout 90 deno bench --allow-env bench/fast_reads_bench.ts >> "$log" 2>&1
  step "fast reads soak (100,000)"; timeout 90 deno run --allow-env --v8-flags=--expose-gc bench/fast_reads_soak.ts >> "$log" 2>&1
  step "autotune bench"; timeout 120 deno run --allow-env --allow-read --allow-write bench/autotune_bench.ts >> "$log" 2>&1
  step "collectives bench"; timeout 120 deno bench --allow-env bench/collectives_bench.ts >> "$log" 2>&1
else
  step "static launches until submitted, interleaved (gaps shape, N=20000)"
  SHAPE=add3 SUBMIT=1 N=20000 REPS=30 SWEEP=256,512,1024,2048 timeout 120 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  step "indirect launches (createCount) until submitted, interleaved (N=20000)"
  SHAPE=add3 INDIRECT=1 SUBMIT=1 N=20000 REPS=20 SWEEP=512 timeout 120 deno run --allow-env bench/launch_breakdown.ts >> "$log" 2>&1
  step "tests"; timeout 240 deno task test > "$OUT/tests.txt" 2>&1; tail -3 "$OUT/tests.txt" >> "$log"
  step "tests with fast reads (client, stream, model, soak)"
  DENOGPU_TEST_FAST_READS=1 timeout 200 deno test -A --v8-flags=--expose-gc tests/client tests/stream tests/model tests/soak > "$OUT/tests_fast.txt" 2>&1
  tail -3 "$OUT/tests_fast.txt" >> "$log"
  step "collectives breakdown"
  for s in "16 4" "64 4"; do set -- $s; MIB=$1 DEVICES=$2 REPS=9 timeout 60 deno run --allow-env bench/collectives_breakdown.ts >> "$log" 2>&1; done
  step "collectives with one worker per device (raw)"
  for s in "16 4" "64 4"; do set -- $s; MIB=$1 DEVICES=$2 REPS=9 timeout 60 deno run --allow-env --allow-read bench/collectives_workers.ts >> "$log" 2>&1; done
fi
step "done"
