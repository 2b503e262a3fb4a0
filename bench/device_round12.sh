#!/usr/bin/env bash
# Device call 3 of run 35 (issue 28): `deno task test` through the suite runner (.ci/test_suite.ts, at most 20 test
# modules per deno test process), spec reads and fast reads side by side, three processes at once each; beside them
# the isolate probe of device_round11.sh (120 generated test files, three clients each, in one deno test process).
# BUDGET (seconds, default 320), JOBS (deno test processes at once per run, default 3), FAST=0 (spec reads only). Through the device tool with carry [".device"]: BUDGET=320 bash bench/device_round12.sh
source bench/_device_call.sh 320
cat "$OUT/setup.txt"
deno check mod.ts server.ts tune.ts tests/ .ci/test_suite.ts > "$OUT/check.txt" 2>&1 || { cat "$OUT/check.txt"; exit 1; }
echo "checked in $(( $(date +%s) - S )) s"
run() { # NAME FAST
  local t0=$(date +%s)
  DENOGPU_TEST_FAST_READS=$2 DENOGPU_TEST_JOBS=${JOBS:-3} timeout -k 5 "$(left 10)" deno task test > "$OUT/$1.txt" 2>&1
  echo "== $1: rc $? after $(( $(date +%s) - t0 )) s" >> "$OUT/$1.txt"
}
run test_spec "" &
if [ "${FAST:-1}" = 1 ]; then run test_fast 1 & fi
mkdir -p /tmp/iso
for i in $(seq -w 1 120); do cat > /tmp/iso/f${i}_test.ts <<EOT
import { createClient } from "$PWD/mod.ts";
Deno.test("file $i", async () => {
  for (let j = 0; j < 3; j++) {
    const c = await createClient();
    await c.read(c.create(new Float32Array(1024)));
    c.destroy();
  }
});
EOT
done
timeout -k 5 "$(left 10)" deno test -A --no-check /tmp/iso/ > $OUT/iso.txt 2>&1
echo "== isolates: $(grep -E '^(ok|FAILED) \|' $OUT/iso.txt); first failing: $(grep -m1 'FAILED (' $OUT/iso.txt)"
wait
for f in test_spec test_fast; do
  echo "== $f"; grep -E "^suite:|^(ok|FAILED) \| [0-9]+ passed|^running [0-9]+ tests? from ./src|^== " "$OUT/$f.txt" | grep -v "^running" | head -16
  echo "   doc modules run: $(grep -c '^running [0-9]* tests\? from .*#' "$OUT/$f.txt")"
  grep -E "FAILED \(" "$OUT/$f.txt" | head -12
done
echo "== done after $(( $(date +%s) - S )) s"
