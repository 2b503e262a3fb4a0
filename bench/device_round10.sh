#!/usr/bin/env bash
# Device call 2 of run 35 (issue 28): why `deno task test` on a GPU finds no adapter after 44 files. A sampler logs the
# GPU's memory (total and per process) with the deno test process's threads and file descriptors every half second;
# first bench/device_memory_probe.ts runs next to the three files that failed alone (model_test hang, the doc tests,
# fast_reads_test; their logs kept), then `deno task test` runs alone with every output line time-stamped.
# BUDGET (seconds, default 585). Through the device tool with carry [".device"]: BUDGET=585 bash bench/device_round10.sh
source bench/_device_call.sh 585
ulimit -n > "$OUT/limits.txt"; ulimit -Hn >> "$OUT/limits.txt"; nvidia-smi >> "$OUT/limits.txt" 2>&1
(
  while true; do
    t=$(( $(date +%s%N) / 1000000 - S * 1000 ))
    g=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null)
    p=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null | tr '\n' ';')
    tp=$(pgrep -f "deno test --doc" | head -1)
    extra=""
    if [ -n "$tp" ]; then extra="test pid $tp threads $(ls /proc/$tp/task 2>/dev/null | wc -l) fds $(ls /proc/$tp/fd 2>/dev/null | wc -l)"; fi
    echo "$t ms gpu $g MiB | $p | $extra"
    sleep 0.5
  done
) > "$OUT/mem.txt" 2>&1 &
sampler=$!
deno check mod.ts server.ts tune.ts tests/ bench/device_memory_probe.ts > "$OUT/check.txt" 2>&1
F=(--no-check --v8-flags=--expose-gc --allow-env --allow-read --allow-write --allow-run)
timeout -k 5 100 deno test "${F[@]}" tests/model/model_test.ts > "$OUT/alone_model.txt" 2>&1 &
a=$!
timeout -k 5 100 deno test --doc "${F[@]}" src/ mod.ts server.ts tune.ts README.md docs/ > "$OUT/alone_doc.txt" 2>&1 &
b=$!
timeout -k 5 100 deno test "${F[@]}" tests/client/fast_reads_test.ts > "$OUT/alone_fast_reads.txt" 2>&1 &
c=$!
timeout -k 5 60 deno run -A --v8-flags=--expose-gc bench/device_memory_probe.ts > "$OUT/probe.txt" 2>&1
wait $a $b $c
echo "== deno task test from $(( $(date +%s) - S )) s" >> "$OUT/mem.txt"
timeout -k 5 "$(left 8)" deno task test 2>&1 | while IFS= read -r line; do echo "$(( $(date +%s%N) / 1000000 - S * 1000 )) $line"; done > "$OUT/test_spec.txt"
kill $sampler
cat "$OUT/probe.txt"
for f in model doc fast_reads; do echo "== alone $f"; grep -E "FAILED|^(ok|FAILED) \|" "$OUT/alone_$f.txt" | tail -6; done
echo "== test"; grep -E "^[0-9]+ (ok|FAILED) \|" "$OUT/test_spec.txt"; awk '/FAILED \(/{print; n++} n>=3{exit}' "$OUT/test_spec.txt"
echo "== done after $(( $(date +%s) - S )) s"
