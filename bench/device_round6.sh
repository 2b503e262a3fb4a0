#!/usr/bin/env bash
# Device call 1 of run 34 (issues 28, 31 and 33): the fast-read tail on this tree and on .device/self (the tree
# before staging reuse), the known-issue test of the multi-Worker exit hang (backend unset,
# DENO_WEBGPU_BACKEND=vulkan, one Worker), the five exit programs 50 times each with the backend set to Vulkan and
# the three-worker all-reduce 50 more times with it unset, `deno task test` twice at once (spec reads and fast
# reads), then the launch, replay and worker A/B against .device/old with .device/self as the control. BUDGET
# (seconds, default 560) caps the whole call. Prepare the trees as bench/device_round5.sh says; then, through the
# device tool with carry [".device"]:
#   BUDGET=560 bash bench/device_round6.sh
source .device/setup.sh > $OUT/setup.txt 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
S=$(date +%s)
left() { local l=$(( ${BUDGET:-560} - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; } > $log
echo "== fast-read tail: this tree, then .device/self, then this tree" >> $log
sed 's#"../mod.ts"#"../.device/self/mod.ts"#' bench/fast_reads_tail.ts > bench/_tail_self.ts
for f in fast_reads_tail _tail_self fast_reads_tail; do timeout $(left 15) deno run --allow-env --allow-read bench/$f.ts 2>&1 | tail -1 >> $log; done
echo "== known issue: several Workers with devices, exit ($(( $(date +%s) - S )) s)" >> $log
DENOGPU_KNOWN_ISSUES=1 DENOGPU_KNOWN_ISSUE_RUNS=24 timeout $(left 100) deno test -A --no-check \
  tests/known_issues/worker_devices_exit_hang_test.ts 2>&1 | grep -E "hung|ok|FAILED|passed|error" | head -12 >> $log
echo "-- the repro with EXIT=1 (Deno.exit(0) once every Worker is done), backend unset, 24 runs" >> $log
hung=0; for b in 1 2 3; do for i in 1 2 3 4 5 6 7 8; do ( out=$(EXIT=1 WORKERS=3 timeout 15 deno run --no-check --allow-read --allow-env tests/known_issues/worker_devices_exit_hang_repro.ts 2>&1); rc=$?; [ $rc = 0 ] && echo "$out" | grep -q done || echo "rc $rc" ) & done; wait; done > /tmp/exit1.txt 2>&1
echo "not clean: $(grep -c rc /tmp/exit1.txt) of 24 ($(sort /tmp/exit1.txt | uniq -c | tr '\n' ' '))" >> $log
echo "== exit runs, DENO_WEBGPU_BACKEND=vulkan ($(( $(date +%s) - S )) s)" >> $log
DENO_WEBGPU_BACKEND=vulkan RUNS=50 JOBS=12 LIMIT=40 OUT=/tmp/exitv timeout $(left 130) bash bench/exit_runs.sh > $OUT/exitv.txt 2>&1 &
pv=$!
BACKEND= CASES=allReduceThree RUNS=50 JOBS=4 LIMIT=40 OUT=/tmp/exitu timeout $(left 130) bash bench/exit_runs.sh > $OUT/exitu.txt 2>&1 &
pu=$!
wait $pv $pu
{ cat $OUT/exitv.txt; echo "-- backend unset"; cat $OUT/exitu.txt; } >> $log
tar czf $OUT/exit_logs.tgz -C /tmp exitv exitu 2>/dev/null
echo "== deno task test, spec reads and fast reads at once ($(( $(date +%s) - S )) s)" >> $log
t0=$(date +%s)
( timeout -k 5 $(left 270) deno task test > $OUT/test_spec.txt 2>&1; echo "rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/test_spec.txt ) &
p1=$!
( DENOGPU_TEST_FAST_READS=1 timeout -k 5 $(left 270) deno task test > $OUT/test_fast.txt 2>&1; echo "rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/test_fast.txt ) &
p2=$!
wait $p1 $p2
for f in spec fast; do echo "-- $f"; grep -E "^(ok|FAILED) \||^rc " $OUT/test_$f.txt; grep -E "^[^ ].* => " $OUT/test_$f.txt | head -8; done >> $log
echo "== A/B ($(( $(date +%s) - S )) s)" >> $log
for t in self old; do OLD=.device/$t L=10 ROUNDS=20 timeout $(left 40) deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -3 >> $log; done
for t in self old; do OLD=.device/$t ROUNDS=20 timeout $(left 30) deno run --allow-env --allow-read bench/ab_worker_trees.ts 2>&1 | tail -1 >> $log; done
echo "== figures, then torch, with what is left ($(( $(date +%s) - S )) s)" >> $log
OUT=$OUT timeout $(left 70) deno run --allow-env --allow-read --allow-write bench/figures.ts >> $log 2>&1
timeout $(left 40) python3 bench/torch_ref.py >> $log 2>&1
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
