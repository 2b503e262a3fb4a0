#!/usr/bin/env bash
# The worker client's figures on a GPU machine, written under $OUT (default
# /tmp/denogpu-out): the event-loop gap (worker_gap.ts), the launch rates
# (worker_encode.ts, one buffer and four with info words), the Deno.bench groups
# (worker_bench.ts), and native crashes over start/destroy cycles
# (worker_cycles.sh, then one 200-cycle process for the memory figures).
# With the `device` tool: carry [".device"], command
#   source .device/setup.sh && bash bench/worker_device.sh
# PARTS selects what runs (default "gap encode bench cycles"); each part takes
# about a minute on the H200 except cycles (RUNS x CYCLES cycles, ~0.3 s each).
set -uo pipefail
OUT="${OUT:-/tmp/denogpu-out}"
mkdir -p "$OUT"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg}" && mkdir -p "$XDG_RUNTIME_DIR"
export NO_COLOR=1
log="$OUT/worker.txt"
{
  echo "== date: $(date -u +%FT%TZ); $(git rev-parse --short HEAD 2>/dev/null)"
  echo "== $(deno --version | tr '\n' ' ')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
} > "$log" 2>&1
for part in ${PARTS:-gap encode bench cycles}; do
  echo "== $part $(date -u +%T)" >> "$log"
  case "$part" in
    gap) OUT="$OUT" REPS="${REPS:-5}" deno run --allow-env --allow-read --allow-write bench/worker_gap.ts >> "$log" 2>&1 ;;
    encode)
      deno run --allow-env --allow-read bench/worker_encode.ts >> "$log" 2>&1
      INFO=1 deno run --allow-env --allow-read bench/worker_encode.ts >> "$log" 2>&1
      ;;
    bench) deno bench --allow-env --allow-read bench/worker_bench.ts >> "$log" 2>&1 ;;
    cycles) RUNS="${RUNS:-20}" CYCLES="${CYCLES:-20}" bash bench/worker_cycles.sh >> "$log" 2>&1 ;;
  esac
done
echo "== done $(date -u +%T)" >> "$log"
