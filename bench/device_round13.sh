#!/usr/bin/env bash
# Device call of run 36 (issue 28): how often a worker whose device is lost crashes the process. One
# `deno test` process of the suite segfaulted (rc 139) inside worker_client_test.ts's "a device lost in the
# worker ..." test. Runs the loss cases of tests/worker/_exit_cases.ts (and "plain" as the control) RUNS times
# each, then worker_client_test.ts whole and that test alone, N times each, JOBS at once; prints the exit
# statuses. BUDGET (seconds, default 200) caps the call. Through the device tool, carry [".device"]:
#   BUDGET=200 bash bench/device_round13.sh
source bench/_device_call.sh 200
deno cache tests/worker/*.ts > /dev/null 2>&1
(OUT=$OUT/exit RUNS=${RUNS:-40} JOBS=${JOBS:-12} LIMIT=40 CASES="lostWithReadPending lostThenAnother plain" \
  timeout -k 5 "$(cap $((B / 2)))" bash bench/exit_runs.sh 2>&1 | tail -6)
rm -rf "$OUT/exit/logs"
tally() { # NAME N ARGS...: runs deno test ARGS N times, JOBS at once; prints the count of each exit status
  local name="$1" n="$2"; shift 2
  seq "$n" | xargs -P "${JOBS:-12}" -I{} sh -c 'timeout -k 5 60 deno test --no-check --allow-all "$@" > /dev/null 2>&1; echo $?' _ "$@" \
    | sort | uniq -c | tr '\n' ' ' | sed "s/^/$name: status count /"; echo
}
tally "worker_client_test.ts whole" "${N:-24}" tests/worker/worker_client_test.ts
tally "the loss test alone" "${N:-24}" --filter "a device lost in the worker" tests/worker/worker_client_test.ts
echo "== done after $(( $(date +%s) - S )) s"
