#!/usr/bin/env bash
# Runs every group of graph_bench.ts (sequence length × kernel size) in a fresh
# process, writes each group's JSON under $GRAPH_OUT (default
# /tmp/denogpu-graph), then prints the ratios to the raw floor with
# graph_summary.ts. A fresh process per group keeps every group out of the
# drift that thousands of iterations without yielding build up (see the
# header of graph_bench.ts).
#   bash bench/graph_groups.sh            # all groups (about 20 minutes on a 2-core VM with llvmpipe)
#   LENGTHS="10 100" WORKGROUPS="1" bash bench/graph_groups.sh
#   ROUNDS=20 N=10 bash bench/graph_groups.sh   # each group in 20 shuffled rounds (noisy hosts)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${GRAPH_OUT:-/tmp/denogpu-graph}"
mkdir -p "$out"
files=()
for size in ${WORKGROUPS:-1 256}; do
  for length in ${LENGTHS:-1 10 100 1000}; do
    file="$out/graph_L${length}_w${size}.json"
    LENGTHS="$length" WORKGROUPS="$size" NO_COLOR=1 deno bench --allow-env --json bench/graph_bench.ts > "$file"
    files+=("$file")
  done
done
deno run --allow-read bench/graph_summary.ts "${files[@]}"
