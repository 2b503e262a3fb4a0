#!/usr/bin/env bash
# Device call 2 of run 34 (issue 33): the fast-read tail, the README's figures with tfjs and PyTorch, the indirect
# and named-form A/Bs, churn with compaction (and LATENCY=1), the launch/replay A/B against .device/base (48a0001, the
# main of the issue), the full scaling series, then the Deno.bench groups of targets 1-3 with what time is left. BUDGET (seconds, default 570) caps the call. Prepare .device/base with
#   mkdir -p .device/base && git archive 48a0001 mod.ts src deno.json | tar -x -C .device/base
# and the tfjs bundle (see bench/device_round5.sh); then, through the device tool with carry [".device"]:
#   BUDGET=570 bash bench/device_round7.sh
source .device/setup.sh > $OUT/setup.txt 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 DENO_WEBGPU_BACKEND=vulkan; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
S=$(date +%s)
left() { local l=$(( ${BUDGET:-570} - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; } > $log
echo "== fast-read tail x2" >> $log
for i in 1 2; do timeout $(left 15) deno run --allow-env bench/fast_reads_tail.ts 2>&1 | tail -1 >> $log; done
echo "== figures ($(( $(date +%s) - S )) s)" >> $log
OUT=$OUT timeout $(left 70) deno run --allow-env --allow-read --allow-write bench/figures.ts >> $log 2>&1
echo "== torch ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 40) python3 bench/torch_ref.py >> $log 2>&1
echo "== indirect and named A/B ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 40) deno run -A bench/ab_shared_count.ts 2>&1 | tail -8 >> $log
timeout $(left 40) deno run --allow-env --allow-read bench/named_launch_ab.ts 2>&1 | tail -6 >> $log
echo "== churn ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 60) deno run --allow-env bench/churn.ts 2>&1 | tail -4 >> $log
LATENCY=1 SEEDS=101-104 timeout $(left 40) deno run --allow-env bench/churn.ts 2>&1 | grep -v " seed " | tail -8 >> $log
echo "== A/B against 48a0001 ($(( $(date +%s) - S )) s)" >> $log
OLD=.device/base L=10 ROUNDS=20 timeout $(left 40) deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -3 >> $log
echo "== scaling ($(( $(date +%s) - S )) s)" >> $log
OUT=$OUT timeout $(left 330) deno run --allow-env --allow-read --allow-write bench/scaling.ts > $OUT/scaling.txt 2>&1
grep -v "^  note" $OUT/scaling.txt | tail -80 >> $log
echo "== Deno.bench: fast reads, gaps ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 45) deno bench --allow-env --allow-read bench/fast_reads_bench.ts > $OUT/bench_fast.txt 2>&1
timeout $(left 45) deno bench --allow-env --allow-read bench/gaps_bench.ts > $OUT/bench_gaps.txt 2>&1
grep -E "^\||group|summary|faster|slower|x " $OUT/bench_fast.txt $OUT/bench_gaps.txt | head -80 >> $log

echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
