#!/usr/bin/env bash
# Device call 3 of run 34 (issues 28 and 33): the fast-read tail, then `deno task test` twice at once (spec
# reads and fast reads) with DENO_WEBGPU_BACKEND=vulkan and the time they need, then the launch A/B against
# .device/old with what is left. BUDGET (seconds, default 585) caps the call. Through the device tool with carry
# [".device"]:
#   BUDGET=585 bash bench/device_round8.sh
source .device/setup.sh > $OUT/setup.txt 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 DENO_WEBGPU_BACKEND=vulkan; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
S=$(date +%s)
left() { local l=$(( ${BUDGET:-585} - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
log=$OUT/log.txt
{ date -u +%FT%TZ; cat $OUT/setup.txt; git log --oneline -1 2>/dev/null; } > $log
echo "== fast-read tail" >> $log
for i in 1; do timeout $(left 15) deno run --allow-env bench/fast_reads_tail.ts 2>&1 | tail -1 >> $log; done
echo "== deno task test, spec reads and fast reads at once, Vulkan ($(( $(date +%s) - S )) s)" >> $log
t0=$(date +%s)
( timeout -k 5 $(left 510) deno task test > $OUT/test_spec.txt 2>&1; echo "rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/test_spec.txt ) &
p1=$!
( DENOGPU_TEST_FAST_READS=1 timeout -k 5 $(left 510) deno task test > $OUT/test_fast.txt 2>&1; echo "rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/test_fast.txt ) &
p2=$!
wait $p1 $p2
for f in spec fast; do echo "-- $f"; grep -E "^(ok|FAILED) \||^rc " $OUT/test_$f.txt; grep -E "\.\.\. FAILED" $OUT/test_$f.txt | head -8; grep "^running" $OUT/test_$f.txt | tail -1; done >> $log
echo "== A/B ($(( $(date +%s) - S )) s)" >> $log
for t in old self; do OLD=.device/$t L=10 ROUNDS=20 timeout $(left 30) deno run --allow-env --allow-read bench/ab_trees.ts 2>&1 | tail -2 >> $log; done
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
