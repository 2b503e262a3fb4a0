#!/usr/bin/env bash
# Device call 5 of run 34 (issue 33), short: the fast-read tail twice, the indirect-count and named-form A/Bs, churn
# with compaction (and LATENCY=1), then the read and write scaling series with what is left. BUDGET (seconds, default
# 270) caps the call. Through the device tool with carry [".device"]:
#   BUDGET=270 bash bench/device_round10.sh
source .device/setup.sh > $OUT/setup.txt 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 DENO_WEBGPU_BACKEND=vulkan; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
S=$(date +%s)
left() { local l=$(( ${BUDGET:-270} - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; } > $log
echo "== fast-read tail x2" >> $log
for i in 1 2; do timeout $(left 15) deno run --allow-env bench/fast_reads_tail.ts 2>&1 | tail -1 >> $log; done
echo "== indirect counts A/B ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 35) deno run -A bench/ab_shared_count.ts 2>&1 | tail -8 >> $log
echo "== named form A/B ($(( $(date +%s) - S )) s)" >> $log
ROUNDS=200 timeout $(left 25) deno run --allow-env --allow-read bench/named_launch_ab.ts 2>&1 | tail -6 >> $log
echo "== churn ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 45) deno run --allow-env bench/churn.ts 2>&1 | tail -4 >> $log
LATENCY=1 SEEDS=101-104 timeout $(left 35) deno run --allow-env bench/churn.ts 2>&1 | grep -v " seed " | tail -8 >> $log
echo "== scaling: read, write ($(( $(date +%s) - S )) s)" >> $log
SERIES=read,write OUT=$OUT timeout $(left 150) deno run --allow-env --allow-read --allow-write bench/scaling.ts > $OUT/scaling.txt 2>&1
grep -v "^  note" $OUT/scaling.txt | tail -40 >> $log
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
