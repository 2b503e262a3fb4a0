#!/usr/bin/env bash
# Device call (issue 28): a backtrace of the rare segfault. Run 36 saw the `deno task test` process of 20 modules ending
# in tests/worker/worker_client_test.ts die with status 139 once in nine runs, inside "a device lost in the worker
# ...". Runs those modules REPS times at once (default 6), each under gdb (batch mode: run, then on a stop the
# stopping thread's backtrace and the thread list); prints each run's exit and any backtrace.
# gdb comes from .device/gdb/*.deb (Debian bookworm: gdb and the libraries a bare machine lacks; fetch them with
# `apt-get download gdb libbabeltrace1 libdebuginfod1 libipt2 libsource-highlight4v5 libpython3.11
# libpython3.11-stdlib libpython3.11-minimal libmpfr6 libxxhash0 libboost-regex1.74.0 libicu72` into .device/gdb),
# unpacked into /tmp/gdbroot, not over the system. BUDGET (seconds, default 400) caps the call. Through the device
# tool, carry [".device"]:
#   REPS=6 BUDGET=400 bash bench/device_round16.sh
source bench/_device_call.sh 400
cat "$OUT/setup.txt"
mkdir -p /tmp/gdbroot && for f in .device/gdb/*.deb; do dpkg -x "$f" /tmp/gdbroot; done
GDB=(env LD_LIBRARY_PATH=/tmp/gdbroot/usr/lib/x86_64-linux-gnu PYTHONHOME=/tmp/gdbroot/usr /tmp/gdbroot/usr/bin/gdb)
"${GDB[@]}" --version | head -1 || { echo "gdb does not start here"; exit 1; }
source bench/_crash_modules.sh
deno cache $FILES > /dev/null 2>&1
one() { # I: one run under gdb; prints its end, and on a signal the backtrace
  timeout -k 5 "$(left 10)" "${GDB[@]}" -q -batch -ex "set pagination off" -ex "handle SIGPIPE nostop noprint" \
    -ex run -ex "bt 40" -ex "info threads" -ex kill \
    --args "$(command -v deno)" test --v8-flags=--expose-gc --allow-env --allow-read --allow-write --allow-run $FILES \
    > "$OUT/gdb$1.txt" 2>&1
  local rc=$? summary
  summary=$(grep -E '^(ok|FAILED) \|' "$OUT/gdb$1.txt" | tail -1)
  echo "run $1: gdb rc $rc; $summary; $(grep -m1 -E 'received signal|exited (normally|with code)' "$OUT/gdb$1.txt")"
  if grep -q "received signal" "$OUT/gdb$1.txt"; then
    grep -E ' \.\.\.$' "$OUT/gdb$1.txt" | tail -2
    sed -n '/received signal/,$p' "$OUT/gdb$1.txt" | head -90
  fi
  rm -f "$OUT/gdb$1.txt"
}
for i in $(seq "${REPS:-6}"); do one "$i" & done
wait
echo "== all done after $(( $(date +%s) - S )) s"
