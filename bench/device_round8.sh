#!/usr/bin/env bash
# Device call 1 of run 35 (issue 28), everything at once on one machine: `deno task test` with spec reads and with
# `DENOGPU_TEST_FAST_READS=1`, the device suite twice (each file alone, JOBS=4 each) and the five exit programs
# (50 runs each), all with DENO_WEBGPU_BACKEND=vulkan. Running them side by side loads the host and the GPU more than
# any one of them alone would. Since run 35, `deno task test` runs through .ci/test_suite.ts (two of its processes at
# once here, DENOGPU_TEST_JOBS=2), the suite waits 240 s per file, and the per-file logs stay on the machine (a
# failing file's errors are in the suite's output). BUDGET (seconds, default 585) caps the call. Through the device tool, carry [".device"]:
#   BUDGET=585 bash bench/device_round8.sh
source bench/_device_call.sh 585
deno check mod.ts server.ts tune.ts tests/ > "$OUT/check.txt" 2>&1
echo "checked in $(( $(date +%s) - S )) s" >> "$OUT/check.txt"
task() { # NAME [ENV=V]: deno task test, its wall time at the end of its log
  local name="$1" t0=$(date +%s%N); shift
  env DENOGPU_TEST_JOBS=2 "$@" timeout -k 5 "$(left 8)" deno task test > "$OUT/$name.txt" 2>&1
  echo "== rc $? after $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/$name.txt"
}
task test_spec DENOGPU_TEST_FAST_READS= &
task test_fast DENOGPU_TEST_FAST_READS=1 &
(OUT=$OUT/suite1 JOBS=4 LIMIT=240 timeout -k 5 "$(left 8)" bash bench/device_suite.sh > "$OUT/suite1.txt" 2>&1) &
(OUT=$OUT/suite2 JOBS=4 LIMIT=240 timeout -k 5 "$(left 8)" bash bench/device_suite.sh > "$OUT/suite2.txt" 2>&1) &
(OUT=$OUT/exit RUNS=50 JOBS=4 LIMIT=60 timeout -k 5 "$(left 8)" bash bench/exit_runs.sh > "$OUT/exit.txt" 2>&1) &
wait
rm -rf "$OUT"/exit/logs "$OUT"/suite1/logs "$OUT"/suite2/logs
for f in suite1 suite2; do grep -v '^ok ' "$OUT/$f.txt"; done
cat "$OUT/exit.txt"
for f in test_spec test_fast; do echo "== $f"; grep -E '^(ok|FAILED) \||^suite:|^== rc' "$OUT/$f.txt" | tail -14; grep -E 'FAILED \(' "$OUT/$f.txt" | head -10; sed -n '/^ ERRORS $/,/^ FAILURES $/p' "$OUT/$f.txt" | head -80; done
echo "== all done after $(( $(date +%s) - S )) s"
