#!/usr/bin/env bash
# Issue 28's acceptance runs, one kind at a time (run 36 ran them side by side: about 16 Deno processes on one
# host and GPU, where a timer test and two child-process exit tests failed once each). PART picks the call:
#   PART=tests  `deno task test` with fast reads, then with spec reads (DENOGPU_TEST_JOBS=4 each), then the five
#               exit programs (RUNS=50, JOBS=6) with what the budget leaves;
#   PART=suite  the device suite twice, one run after the other (JOBS=6, LIMIT=240), then, with what the budget
#               leaves (at least 60 s), issue 33's launch A/B against 48a0001 (`ab_trees.ts`, OLD=.device/base);
#   PART=perf   issue 33's A/Bs alone: `ab_trees.ts` (AB_ROUNDS rounds, default 20, at most 60% of the budget) and
#               `ab_shared_count.ts` and `ab_transfers.ts` (spec reads, then fast reads) against 48a0001 (.device/base),
#               then, with what the budget leaves, `ab_shared_count.ts` for this tree alone under V8's CPU profiler
#               (its .cpuprofile in $OUT/prof).
# Each prints its summaries, every failed test's error report, and any process that ended before its summary
# (the runner names the test it was in). BUDGET (seconds, default 580) caps the
# call. Through the device tool, carry [".device"]:
#   PART=tests BUDGET=580 bash bench/device_round15.sh
source bench/_device_call.sh 580
cat "$OUT/setup.txt"
case "${PART:-tests}" in
  tests)
    task_test fast
    task_test spec
    if [ "$(left 30)" -gt 60 ]; then
      OUT=$OUT/exit RUNS=50 JOBS=6 LIMIT=60 timeout -k 5 "$(left 10)" bash bench/exit_runs.sh 2>&1 | tail -8
      rm -rf "$OUT/exit/logs"
    fi
    ;;
  suite)
    for i in 1 2; do
      OUT=$OUT/suite$i JOBS=6 LIMIT=240 timeout -k 5 "$(left 10)" bash bench/device_suite.sh > "$OUT/suite$i.txt" 2>&1
      grep -v '^ok ' "$OUT/suite$i.txt" | head -120
      rm -rf "$OUT/suite$i"
    done
    if [ "$(left 10)" -ge 60 ] && [ -f .device/base/mod.ts ]; then
      echo "== ab_trees against .device/base (48a0001), ROUNDS=20"
      OLD=.device/base L=10 ROUNDS=20 timeout -k 5 "$(left 5)" deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -8
    fi
    ;;
  perf)
    echo "== ab_trees against .device/base (48a0001), ROUNDS=${AB_ROUNDS:-20}"
    OLD=.device/base L=10 ROUNDS=${AB_ROUNDS:-20} timeout -k 5 "$(cap $(( B * 6 / 10 )))" deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -8
    echo "== ab_shared_count against .device/base (48a0001), ROUNDS=20"
    OLD=.device/base ROUNDS=20 timeout -k 5 "$(cap $(( B * 2 / 10 )))" deno run -A bench/ab_shared_count.ts 2>&1 | tail -8
    echo "== ab_transfers against .device/base (48a0001), ROUNDS=10"
    OLD=.device/base ROUNDS=10 timeout -k 5 "$(cap $(( B * 15 / 100 )))" deno run -A bench/ab_transfers.ts 2>&1 | tail -7
    echo "== ab_transfers with fast reads against .device/base (48a0001), ROUNDS=6"
    FAST=1 OLD=.device/base ROUNDS=6 timeout -k 5 "$(cap $(( B * 10 / 100 )))" deno run -A bench/ab_transfers.ts 2>&1 | tail -7
    if [ "$(left 10)" -ge 30 ]; then
      echo "== ab_shared_count, this tree alone, under V8's CPU profiler (into \$OUT/prof)"
      CASES="this tree" ROUNDS=6 timeout -k 5 "$(left 10)" deno run -A --cpu-prof --cpu-prof-interval=100 --cpu-prof-dir="$OUT/prof" \
        bench/ab_shared_count.ts 2>&1 | tail -5
    fi
    ;;
esac
echo "== all done after $(( $(date +%s) - S )) s"
