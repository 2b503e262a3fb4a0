#!/usr/bin/env bash
# One device call for issues 28-33 (run 33 in RESULTS.md): the suite twice at once (spec reads and fast reads,
# each file alone), the exit programs 50 times each, the README's figures with tfjs and PyTorch, the launch and
# replay A/B against .device/old (with .device/self as the control), and QUICK scaling. BUDGET (seconds, default
# 460) caps the whole call: each step gets what is left. Prepare the trees first:
#   mkdir -p .device/old .device/self && git archive b4e8ca5 mod.ts src deno.json | tar -x -C .device/old
#   git archive HEAD mod.ts src deno.json | tar -x -C .device/self
# and the tfjs bundle (see bench/autotune_bench.ts). Through the device tool, carry [".device"]:
#   BUDGET=450 bash bench/device_round5.sh
source .device/setup.sh > $OUT/setup.txt 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1; mkdir -p $XDG_RUNTIME_DIR
S=$(date +%s)
left() { local l=$(( ${BUDGET:-460} - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; git rev-parse --short HEAD 2>/dev/null; } > $log
echo "== suites, spec reads and fast reads at once" >> $log
JOBS=6 LIMIT=120 OUT=/tmp/suite1 timeout $(left 210) bash bench/device_suite.sh > $OUT/suite1.txt 2>&1 &
p1=$!
DENOGPU_TEST_FAST_READS=1 JOBS=6 LIMIT=120 OUT=/tmp/suite2 timeout $(left 210) bash bench/device_suite.sh > $OUT/suite2.txt 2>&1 &
p2=$!
wait $p1 $p2
for n in 1 2; do echo "-- suite$n"; tail -3 $OUT/suite$n.txt; grep "^FAIL" $OUT/suite$n.txt; done >> $log
tar czf $OUT/suites_logs.tgz -C /tmp suite1 suite2 2>/dev/null
echo "== exit runs ($(( $(date +%s) - S )) s)" >> $log
RUNS=50 JOBS=10 LIMIT=40 OUT=/tmp/exit1 timeout $(left 80) bash bench/exit_runs.sh > $OUT/exit1.txt 2>&1
cat $OUT/exit1.txt >> $log
tar czf $OUT/exit1_logs.tgz -C /tmp/exit1 runs.txt logs 2>/dev/null
echo "== figures ($(( $(date +%s) - S )) s)" >> $log
OUT=$OUT timeout $(left 60) deno run --allow-env --allow-read --allow-write bench/figures.ts >> $log 2>&1
echo "== torch ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 35) python3 bench/torch_ref.py >> $log 2>&1
echo "== A/B ($(( $(date +%s) - S )) s)" >> $log
for t in self old; do OLD=.device/$t L=10 ROUNDS=8 timeout $(left 25) deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -3 >> $log; done
for t in self old; do OLD=.device/$t ROUNDS=8 timeout $(left 18) deno run --allow-env --allow-read bench/ab_worker_trees.ts 2>&1 | tail -1 >> $log; done
echo "== scaling ($(( $(date +%s) - S )) s)" >> $log
QUICK=1 OUT=$OUT timeout $(left 120) deno run --allow-env --allow-read --allow-write bench/scaling.ts > $OUT/scaling.txt 2>&1
tail -25 $OUT/scaling.txt >> $log
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
