#!/usr/bin/env bash
# Device call of run 36 (issue 28): the `deno task test` process that segfaulted (rc 139, spec reads) in
# worker_client_test.ts's loss test ran 20 modules; each file alone never did (round 13). Runs that process's
# modules, with the runner's flags, REPS times at once (the tree as committed), beside `deno task test` with spec
# reads in groups of GROUP modules (default 10); prints each chunk run's exit status, the failing tests and
# the task's summary. BUDGET (seconds, default 300) caps the call. Through the device tool, carry [".device"]:
#   BUDGET=300 bash bench/device_round14.sh
source bench/_device_call.sh 300
source bench/_crash_modules.sh
deno cache $FILES > /dev/null 2>&1
errors() { # FILE: each failed test's error report (between ERRORS and FAILURES), at most 80 lines
  sed -n '/^ ERRORS $/,/^ FAILURES $/p' "$1" | head -80
}
chunk() { # I: one run of the chunk; prints its status, its last test line when it died, its failures
  timeout -k 5 "$(left 10)" deno test --v8-flags=--expose-gc --allow-env --allow-read --allow-write --allow-run \
    $FILES > "$OUT/chunk$1.txt" 2>&1
  local rc=$?
  echo "chunk $1: rc $rc; $(grep -E '^(ok|FAILED) \|' "$OUT/chunk$1.txt" | tail -1)"
  [ "$rc" != 0 ] && { grep -E ' \.\.\.$|FAILED \(' "$OUT/chunk$1.txt" | tail -3; errors "$OUT/chunk$1.txt"; }
  rm -f "$OUT/chunk$1.txt"
}
for i in $(seq "${REPS:-6}"); do chunk "$i" & done
t0=$(date +%s)
DENOGPU_TEST_GROUP=${GROUP:-10} DENOGPU_TEST_JOBS=4 DENOGPU_TEST_FAST_READS= timeout -k 5 "$(left 10)" deno task test \
  > "$OUT/task.txt" 2>&1
echo "== task test, spec reads, groups of ${GROUP:-10}: rc $? after $(( $(date +%s) - t0 )) s"
grep -E '^suite:.*status|FAILED \(|^(ok|FAILED) \|' "$OUT/task.txt" | tail -22
errors "$OUT/task.txt"
wait
rm -f "$OUT/task.txt"
echo "== done after $(( $(date +%s) - S )) s"
