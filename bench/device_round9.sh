#!/usr/bin/env bash
# Device call 4 of run 34 (issues 28 and 33): the fast-read tail, `deno task test` (spec reads) alone with
# DENO_WEBGPU_BACKEND=vulkan and the time it needs, then the indirect-count A/B with what is left. BUDGET (seconds,
# default 370) caps the call. Through the device tool with carry [".device"]:
#   BUDGET=370 bash bench/device_round9.sh
source .device/setup.sh > $OUT/setup.txt 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 DENO_WEBGPU_BACKEND=vulkan; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
S=$(date +%s)
left() { local l=$(( ${BUDGET:-370} - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; } > $log
echo "== fast-read tail" >> $log
timeout $(left 15) deno run --allow-env bench/fast_reads_tail.ts 2>&1 | tail -1 >> $log
echo "== deno task test, spec reads, Vulkan ($(( $(date +%s) - S )) s)" >> $log
t0=$(date +%s)
timeout -k 5 $(( $(left 400) - 35 )) deno task test > $OUT/test_spec.txt 2>&1; echo "rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/test_spec.txt
{ grep -E "^(ok|FAILED) \||^rc " $OUT/test_spec.txt; grep -E "\.\.\. FAILED" $OUT/test_spec.txt | head -8; grep "^running" $OUT/test_spec.txt | tail -1; grep -c "\.\.\. ok" $OUT/test_spec.txt; } >> $log
echo "== indirect counts A/B ($(( $(date +%s) - S )) s)" >> $log
timeout $(left 30) deno run -A bench/ab_shared_count.ts 2>&1 | tail -8 >> $log
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
