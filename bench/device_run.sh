#!/usr/bin/env bash
# Runs the benchmarks (and the test suite and demo) on a GPU machine and writes
# the results under $OUT. Used with the `device` tool:
#   bash ../shared/tools/device-prep.sh      # once, builds .device/
#   run: carry [".device"], command "source .device/setup.sh && bash bench/device_run.sh"
# Env: BENCHES (names, default all but graph), GRAPH_GROUPS=1 (graph_bench one
# process per group, see graph_groups.sh; on the H200 with ROUNDS=20 N=10),
# SKIP_TESTS=1, HUGETLB=1.
set -uo pipefail
OUT="${OUT:-/tmp/denogpu-out}"
mkdir -p "$OUT"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg}" && mkdir -p "$XDG_RUNTIME_DIR"
log="$OUT/log.txt"
{
  echo "== date: $(date -u +%FT%TZ)"
  echo "== $(deno --version | tr '\n' ' ')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)" 
} > "$log" 2>&1
deno run --allow-env examples/demo.ts >> "$log" 2>&1
benches="${BENCHES:-launch tasks_max transfer throughput memory}"
for b in $benches; do
  echo "== bench $b" >> "$log"
  NO_COLOR=1 deno bench --allow-env "bench/${b}_bench.ts" >> "$log" 2>&1
  NO_COLOR=1 deno bench --allow-env --json "bench/${b}_bench.ts" > "$OUT/${b}.json" 2>/dev/null
done
if [ -n "${GRAPH_GROUPS:-}" ]; then
  echo "== graph_bench, one process per group" >> "$log"
  GRAPH_OUT="$OUT/graph_groups" bash bench/graph_groups.sh >> "$log" 2>&1
fi
if [ -n "${HUGETLB:-}" ]; then
  echo "== bench transfer with GLIBC_TUNABLES=glibc.malloc.hugetlb=1" >> "$log"
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 NO_COLOR=1 deno bench --allow-env bench/transfer_bench.ts >> "$log" 2>&1
fi
if [ -z "${SKIP_TESTS:-}" ]; then
  echo "== tests" >> "$log"
  NO_COLOR=1 deno task test > "$OUT/tests.txt" 2>&1
  tail -3 "$OUT/tests.txt" >> "$log"
fi
echo "== done $(date -u +%FT%TZ)" >> "$log"
