#!/usr/bin/env bash
# Issue 28's acceptance runs in one call, the most telling first, each part cut to what the budget leaves:
#   1. `exit_runs.sh` over CASES (default: the three teardown cases, then the five exit programs of the acceptance),
#      RUNS each (default 50), JOBS at once (default 8), for at most EXIT_SHARE percent of the budget (default 30);
#   2. `deno task test` with fast reads, then with spec reads (DENOGPU_TEST_JOBS=4), each if at least 200 s are left;
#   3. the device suite (`device_suite.sh`, JOBS=6, LIMIT=240) as often as SUITES says (default 2), each if at least
#      150 s are left.
# PARTS (default "exit tests suite") picks and orders the parts. Each prints its summaries and every failure's report.
# BUDGET (seconds, default 580) caps the call. Through the device tool, carry [".device"]:
#   BUDGET=580 bash bench/device_round18.sh
source bench/_device_call.sh 580
cat "$OUT/setup.txt"
for part in ${PARTS:-exit tests suite}; do
  case "$part" in
    exit)
      echo "== exit programs"
      OUT=$OUT/exit RUNS=${RUNS:-50} JOBS=${JOBS:-8} LIMIT=60 \
        CASES="${CASES:-threeWorkers allReduceThreeTogether destroyedTogetherTakeTurns lostWhileOthersTearDown allReduceThree compileError validationError destroyWithReadsPending mainAndWorker}" \
        timeout -k 5 "$(cap $(( B * ${EXIT_SHARE:-30} / 100 )))" bash bench/exit_runs.sh 2>&1 | tail -12
      rm -rf "$OUT/exit/logs"
      ;;
    tests)
      for mode in fast spec; do
        [ "$(left 10)" -ge 200 ] || { echo "== deno task test, $mode reads: not run, $(left 0) s left"; continue; }
        task_test "$mode"
      done
      ;;
    suite)
      for i in $(seq "${SUITES:-2}"); do
        [ "$(left 10)" -ge 150 ] || { echo "== device suite $i: not run, $(left 0) s left"; continue; }
        t0=$(date +%s)
        OUT=$OUT/suite$i JOBS=6 LIMIT=240 timeout -k 5 "$(left 10)" bash bench/device_suite.sh > "$OUT/suite$i.txt" 2>&1
        echo "== device suite $i: rc $? after $(( $(date +%s) - t0 )) s"
        grep -v '^ok ' "$OUT/suite$i.txt" | head -60
        rm -rf "$OUT/suite$i/logs"
      done
      ;;
  esac
done
echo "== all done after $(( $(date +%s) - S )) s"
