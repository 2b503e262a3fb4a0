#!/usr/bin/env bash
# Device call (issue 28): the crash of three worker clients after an all-reduce. Run 39 saw the exit program
# `allReduceThree` (tests/worker/_exit_cases.ts) segfault in 2 of 50 runs, and its child-process test fail once in a
# `deno task test`; under gdb, one crash in 48 runs, in a Worker's thread after the other two Workers had ended.
# Two parts:
#   1. CASE (default allReduceThree) RUNS times (default 40), JOBS at once (default 6), each under gdb (batch mode: run,
#      then on a stop every thread's backtrace and the process's mappings), for at most GDB_SHARE percent of the
#      budget (default 40); prints each crash's backtraces and, for its first frames, the library each lies in.
#   2. With the rest, `exit_runs.sh` over CASES2, RUNS2 each (default 60), JOBS2 at once (default 8). The default
#      cases tell concurrent Worker teardown from the all-reduce's shared memory as the cause: allReduceThree (since
#      run 39 `closeDevices()` ends the Workers one after another, each once the one before has exited),
#      allReduceThreeTogether (the three destroyed at once, as `closeDevices()` did in run 39), threeWorkers (no
#      collective, destroyed at once).
# gdb as in device_round16.sh, plus libglib2.0-0, libdw1 and libelf1 (`apt-get download` them into .device/gdb).
# BUDGET (seconds, default 300) caps the call. Through the device tool, carry [".device"]:
#   BUDGET=300 bash bench/device_round17.sh
source bench/_device_call.sh 300
cat "$OUT/setup.txt"
mkdir -p /tmp/gdbroot && for f in .device/gdb/*.deb; do dpkg -x "$f" /tmp/gdbroot; done
GDB=(env LD_LIBRARY_PATH=/tmp/gdbroot/usr/lib/x86_64-linux-gnu PYTHONHOME=/tmp/gdbroot/usr /tmp/gdbroot/usr/bin/gdb)
"${GDB[@]}" --version > "$OUT/gdb_version.txt" 2>&1 || { cat "$OUT/gdb_version.txt"; echo "gdb does not start here"; exit 1; }
head -1 "$OUT/gdb_version.txt"
deno cache tests/worker/_exit_cases.ts > /dev/null 2>&1
gdb_left() { echo $(( B * ${GDB_SHARE:-40} / 100 - ($(date +%s) - S) - 15 )); }
one() { # I: one run under gdb; prints its end, and on a signal the backtraces
  [ "$(gdb_left)" -gt 0 ] || return 0
  EXIT_CASE=${CASE:-allReduceThree} timeout -k 5 "$(left 10)" "${GDB[@]}" -q -batch -ex "set pagination off" \
    -ex "handle SIGPIPE nostop noprint" -ex "handle SIGUSR1 nostop noprint" -ex run -ex "bt 30" \
    -ex "thread apply all bt 12" -ex "info proc mappings" -ex kill --args "$(command -v deno)" run --no-check --allow-all \
    tests/worker/_exit_cases.ts > "$OUT/gdb$1.txt" 2>&1
  local rc=$?
  if grep -q "received signal" "$OUT/gdb$1.txt"; then
    echo "== run $1: gdb rc $rc; $(grep -m1 'received signal' "$OUT/gdb$1.txt")"
    grep -E 'case .* done|worker thread' "$OUT/gdb$1.txt" | head -3
    sed -n '/received signal/,/^Thread 1 /p' "$OUT/gdb$1.txt" | grep -v '^\[New Thread\|^\[Thread .* exited' | head -120
    python3 - "$OUT/gdb$1.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
frames = re.findall(r"^#\d+ +(0x[0-9a-f]+) in", text.split("received signal", 1)[1], re.M)[:8]
maps = re.findall(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+\S*\s*(.*)$", text, re.M)
for f in frames:
    pc = int(f, 16)
    hit = [m for m in maps if int(m[0], 16) <= pc < int(m[1], 16)]
    where = f"{hit[0][3] or '(anonymous)'} +{pc - int(hit[0][0], 16) + int(hit[0][2], 16):#x}" if hit else "no mapping"
    print(f"frame {f}: {where}")
PY
  else
    echo "run $1: gdb rc $rc; $(grep -m1 -E 'exited (normally|with code)' "$OUT/gdb$1.txt")"
  fi
  rm -f "$OUT/gdb$1.txt"
}
i=0
while [ "$i" -lt "${RUNS:-40}" ] && [ "$(gdb_left)" -gt 0 ]; do
  for j in $(seq "${JOBS:-6}"); do i=$((i + 1)); one "$i" & done
  wait
done
echo "== exit runs with the rest of the budget"
if [ "$(left 30)" -gt 30 ]; then
  OUT=$OUT/exit CASES="${CASES2:-allReduceThree allReduceThreeTogether threeWorkers}" RUNS=${RUNS2:-60} JOBS=${JOBS2:-8} \
    LIMIT=60 timeout -k 5 "$(left 10)" bash bench/exit_runs.sh 2>&1 | tail -8
  rm -rf "$OUT/exit/logs"
fi
echo "== all done after $(( $(date +%s) - S )) s"
