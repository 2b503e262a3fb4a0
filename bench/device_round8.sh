#!/usr/bin/env bash
# Device call 1 of run 35 (issue 28), everything at once on one machine: `deno task test` with spec reads and with
# `DENOGPU_TEST_FAST_READS=1`, the device suite twice (each file alone, JOBS=4 each) and the five exit programs
# (50 runs each), all with DENO_WEBGPU_BACKEND=vulkan. Running them side by side loads the host and the GPU more than
# any one of them alone would. BUDGET (seconds, default 585) caps the call. Through the device tool, carry [".device"]:
#   BUDGET=585 bash bench/device_round8.sh
source bench/_device_call.sh 585
deno check mod.ts server.ts tune.ts tests/ > "$OUT/check.txt" 2>&1
echo "checked in $(( $(date +%s) - S )) s" >> "$OUT/check.txt"
task() { # NAME [ENV=V]: deno task test, its wall time at the end of its log
  local name="$1" t0=$(date +%s%N); shift
  env "$@" timeout -k 5 "$(left 8)" deno task test > "$OUT/$name.txt" 2>&1
  echo "== rc $? after $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/$name.txt"
}
task test_spec DENOGPU_TEST_FAST_READS= &
task test_fast DENOGPU_TEST_FAST_READS=1 &
(OUT=$OUT/suite1 JOBS=4 LIMIT=120 timeout -k 5 "$(left 8)" bash bench/device_suite.sh > "$OUT/suite1.txt" 2>&1) &
(OUT=$OUT/suite2 JOBS=4 LIMIT=120 timeout -k 5 "$(left 8)" bash bench/device_suite.sh > "$OUT/suite2.txt" 2>&1) &
(OUT=$OUT/exit RUNS=50 JOBS=4 LIMIT=60 timeout -k 5 "$(left 8)" bash bench/exit_runs.sh > "$OUT/exit.txt" 2>&1) &
wait
rm -f "$OUT"/exit/logs/*.txt
for f in suite1 suite2; do grep -v '^ok ' "$OUT/$f.txt"; done
cat "$OUT/exit.txt"
for f in test_spec test_fast; do echo "== $f"; grep -E '^(ok|FAILED) \||^== rc|^ERRORS|FAILURES' "$OUT/$f.txt" | tail -4; done
echo "== all done after $(( $(date +%s) - S )) s"
