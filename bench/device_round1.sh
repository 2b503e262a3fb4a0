#!/usr/bin/env bash
# One H200 round: the issue-17 A/B, the issue-18 baselines, the matmul sweep,
# the autotune bench, PyTorch's reference figures and the test suite. Writes
# everything under $OUT. Used with the device tool:
#   carry [".device"], command "source .device/setup.sh && bash bench/device_round1.sh"
source "$(dirname "$0")/_device_log.sh"
step "torch reference"; timeout 120 python3 bench/torch_ref.py >> "$log" 2>&1
step "matmul sweep"; timeout 150 deno run --allow-env --allow-write bench/matmul_sweep.ts >> "$log" 2>&1
step "autotune bench"; timeout 150 deno run --allow-env --allow-read --allow-write bench/autotune_bench.ts >> "$log" 2>&1
step "gaps bench"; timeout 120 deno bench --allow-env bench/gaps_bench.ts >> "$log" 2>&1
step "churn"; timeout 60 deno run --allow-env bench/churn.ts >> "$log" 2>&1
step "transfer bench"; timeout 90 deno bench --allow-env bench/transfer_bench.ts >> "$log" 2>&1
step "A/B trees L=10 (OLD = before this session)"; OLD=.device/old L=10 ROUNDS=20 timeout 120 deno run --allow-env --allow-read bench/ab_trees.ts >> "$log" 2>&1
step "tests"; timeout 240 deno task test > "$OUT/tests.txt" 2>&1; tail -3 "$OUT/tests.txt" >> "$log"
step "done"
