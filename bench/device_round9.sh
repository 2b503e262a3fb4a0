#!/usr/bin/env bash
# Device call 2 of run 35 (issues 33 and 31) in one call: the fast-read tail, the README's figures (interleaved step)
# with PyTorch, indirect counts from any handle, churn with compaction (and LATENCY=1), the A/B of launch and replay
# against 48a0001 (.device/base, issue 33's main) and b4e8ca5 (.device/old, issue 31's main) with a control
# (.device/self, this tree), the worker client's A/B, QUICK scaling, then the Deno.bench groups of 33's targets 1-3
# with what time is left. BUDGET (seconds, default 580) caps the call. Prepare the trees with
#   git archive <rev> mod.ts src deno.json | tar -x -C .device/<name>
# and the tfjs bundle (see bench/device_round5.sh); then, through the device tool with carry [".device"]:
#   BUDGET=580 bash bench/device_round9.sh
source bench/_device_call.sh 580
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv; } > $log
deno cache bench/*.ts > /dev/null 2>&1
echo "== fast-read tail x2 ($(( $(date +%s) - S )) s)" >> $log
for i in 1 2; do timeout $(cap 20) deno run --allow-env bench/fast_reads_tail.ts 2>&1 | tail -1 >> $log; done
echo "== figures ($(( $(date +%s) - S )) s)" >> $log
OUT=$OUT timeout $(cap 75) deno run --allow-env --allow-read --allow-write bench/figures.ts >> $log 2>&1
echo "== torch ($(( $(date +%s) - S )) s)" >> $log
timeout $(cap 40) python3 bench/torch_ref.py >> $log 2>&1
echo "== indirect A/B ($(( $(date +%s) - S )) s)" >> $log
timeout $(cap 40) deno run -A bench/ab_shared_count.ts 2>&1 | tail -8 >> $log
echo "== churn ($(( $(date +%s) - S )) s)" >> $log
timeout $(cap 60) deno run --v8-flags=--expose-gc --allow-env bench/churn.ts 2>&1 | tail -4 >> $log
LATENCY=1 SEEDS=101-104 timeout $(cap 35) deno run --v8-flags=--expose-gc --allow-env bench/churn.ts 2>&1 | grep -v " seed " | tail -8 >> $log
for t in self base old; do
  echo "== A/B launch + replay against $t ($(( $(date +%s) - S )) s)" >> $log
  OLD=.device/$t L=10 ROUNDS=20 timeout $(cap 40) deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -6 >> $log
done
for t in self old; do
  echo "== worker A/B against $t ($(( $(date +%s) - S )) s)" >> $log
  OLD=.device/$t ROUNDS=20 timeout $(cap 30) deno run --allow-env --allow-read bench/ab_worker_trees.ts 2>&1 | tail -3 >> $log
done
echo "== scaling QUICK ($(( $(date +%s) - S )) s)" >> $log
QUICK=1 OUT=$OUT timeout $(cap 110) deno run --allow-env --allow-read --allow-write bench/scaling.ts > $OUT/scaling.txt 2>&1
grep -v "^  note" $OUT/scaling.txt | tail -60 >> $log
echo "== Deno.bench: fast reads, gaps ($(( $(date +%s) - S )) s)" >> $log
timeout $(cap 45) deno bench --allow-env --allow-read bench/fast_reads_bench.ts > $OUT/bench_fast.txt 2>&1
timeout $(cap 45) deno bench --allow-env --allow-read bench/gaps_bench.ts > $OUT/bench_gaps.txt 2>&1
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
