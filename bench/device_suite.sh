#!/usr/bin/env bash
# Runs every test file alone, each in its own `deno test` process with a time
# limit, and prints one line per file: its verdict, exit status, seconds and
# Deno's summary. A hang (the limit reached, even after "ok") and a native
# crash (exit 134 abort, 139 segfault, ...) are failures and are named as such:
# a process that printed "ok" and then did not exit cleanly is not a pass.
# Ends with "N passed, N failed" over files (the doc tests count as two: doc:src and doc:root).
#
# On the GPU machine (the `device` tool, carry [".device"]):
#   source .device/setup.sh && bash bench/device_suite.sh
# Anywhere: bash bench/device_suite.sh
# Env: LIMIT (seconds per file, default 240), JOBS (files at once, default 1),
#      BACKEND (DENO_WEBGPU_BACKEND for the runs: default vulkan, what the README advises; empty
#      leaves it unset, which starts every backend, GL included, and made several Workers hang at exit),
#      FILES (a space-separated list instead of every test file),
#      OUT (folder for the per-file logs and suite.txt, default /tmp/denogpu-suite).
set -uo pipefail
cd "$(dirname "$0")/.."
LIMIT="${LIMIT:-240}"
JOBS="${JOBS:-1}"
OUT="${OUT:-/tmp/denogpu-suite}"
mkdir -p "$OUT/logs"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg}" NO_COLOR=1 DENO_NO_UPDATE_CHECK=1
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
backend="${BACKEND-vulkan}"
if [ -n "$backend" ]; then export DENO_WEBGPU_BACKEND="$backend"; else unset DENO_WEBGPU_BACKEND; fi
FLAGS=(--no-check --v8-flags=--expose-gc --allow-env --allow-read --allow-write --allow-run)

files="${FILES:-$(find tests -name '*_test.ts' | sort)}"
# Type-check once (the per-file runs skip it); a type error fails the suite at once.
if ! deno check mod.ts server.ts tune.ts tests/ > "$OUT/logs/check.txt" 2>&1; then
  cat "$OUT/logs/check.txt"
  echo "0 passed, 1 failed"
  exit 1
fi

# one FILE: runs it and prints its line.
one() {
  local file="$1" name log start rc secs summary verdict
  name="$(echo "$file" | tr '/' '_')"
  log="$OUT/logs/$name.txt"
  start=$(date +%s%N)
  # The doc tests in the two processes `deno task test` gives them (.ci/test_suite.ts): on NVIDIA one process finds
  # no adapter after about 32 test modules that used WebGPU, and the doc tests hold more than that.
  if [ "$file" = "doc:src" ]; then
    timeout -k 10 "$LIMIT" deno test --doc "${FLAGS[@]}" src/ > "$log" 2>&1
  elif [ "$file" = "doc:root" ]; then
    timeout -k 10 "$LIMIT" deno test --doc "${FLAGS[@]}" mod.ts server.ts tune.ts README.md docs/ > "$log" 2>&1
  else
    timeout -k 10 "$LIMIT" deno test "${FLAGS[@]}" "$file" > "$log" 2>&1
  fi
  rc=$?
  secs=$(( ($(date +%s%N) - start) / 1000000 ))
  summary="$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$log" | tail -1)"
  case "$rc" in
    0) verdict="" ;;
    124 | 137) verdict="HANG (killed after ${LIMIT} s)" ;;
    134) verdict="CRASH (abort, exit 134)" ;;
    139) verdict="CRASH (segfault, exit 139)" ;;
    1) verdict="FAIL (tests failed)" ;;
    *) verdict="FAIL (exit $rc)" ;;
  esac
  grep -qE 'double free|corrupted|panicked at|Segmentation fault' "$log" && verdict="$verdict; native error: $(grep -m1 -E 'double free|corrupted|panicked at|Segmentation fault' "$log")"
  printf '%-5s %4s %7.1fs  %-60s %s\n' "$([ "$rc" = 0 ] && echo ok || echo FAIL)" "$rc" "$(echo "$secs" | awk '{print $1/1000}')" "$file" "${summary:-no summary}${verdict:+  [$verdict]}"
  # A failure brings its evidence along (the per-file logs may not leave the GPU machine): the failed tests and
  # the start of Deno's error report, or, for a hang or crash, the log's last lines.
  if [ "$rc" != 0 ]; then
    { grep -E 'FAILED \(' "$log" | head -5
      if grep -q '^ ERRORS' "$log"; then sed -n '/^ ERRORS/,$p' "$log" | head -30; else tail -15 "$log"; fi
    } | sed 's/^/      | /'
  fi
}
export -f one
export LIMIT OUT
export FLAGS_STR="${FLAGS[*]}"

start=$(date +%s)
{ printf '%s\n' $files doc:src doc:root; } | xargs -P "$JOBS" -I{} bash -c 'FLAGS=($FLAGS_STR); one "$@"' _ {} | tee "$OUT/suite.txt"
passed=$(grep -c '^ok ' "$OUT/suite.txt")
failed=$(grep -c '^FAIL ' "$OUT/suite.txt")
echo "suite: $(date -u +%FT%TZ), $(deno --version | head -1), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi'), backend ${backend:-unset}, JOBS=$JOBS, LIMIT=$LIMIT s, $(( $(date +%s) - start )) s" | tee -a "$OUT/suite.txt"
if [ "$failed" -gt 0 ]; then grep '^FAIL ' "$OUT/suite.txt" | sed 's/^/failed: /'; fi
echo "$passed passed, $failed failed" | tee -a "$OUT/suite.txt"
[ "$failed" -eq 0 ]
