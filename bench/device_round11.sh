#!/usr/bin/env bash
# Device call 3 of run 35 (issue 28): is there a per-process limit on adapters, devices or WebGPU instances? Runs
# bench/device_adapter_limit.ts (each mode until no adapter is found), bench/device_instance_probe.ts (Workers, one
# instance each), then `deno test` over 150 generated files that each make three clients (one isolate, one instance
# each). Through the device tool with carry [".device"]: bash bench/device_round11.sh
source bench/_device_call.sh 320
log=$OUT/log.txt
cat "$OUT/setup.txt" > $log
mkdir -p /tmp/iso
for i in $(seq -w 1 120); do cat > /tmp/iso/f${i}_test.ts <<EOT
import { createClient } from "$PWD/mod.ts";
const vm = () => { const s = Deno.readTextFileSync("/proc/self/status"); return (Number(/VmSize:\\s+(\\d+)/.exec(s)![1]) / 1048576).toFixed(1) + " GiB"; };
Deno.test("file $i", async () => {
  console.log("file $i VmSize", vm());
  for (let j = 0; j < 3; j++) {
    const c = await createClient();
    await c.read(c.create(new Float32Array(1024)));
    c.destroy();
  }
  if (Deno.env.get("GC") === "1") for (let k = 0; k < 3; k++) { await new Promise((r) => setTimeout(r, 5)); (globalThis as any).gc(); }
});
EOT
done
for gc in 0 1; do
  echo "== isolates, gc at each file's end: $gc ($(( $(date +%s) - S )) s)" >> $log
  GC=$gc timeout -k 5 60 deno test -A --no-check --v8-flags=--expose-gc /tmp/iso/ > $OUT/iso$gc.txt 2>&1
  grep -E "^(ok|FAILED) \|" $OUT/iso$gc.txt >> $log
  echo "first failing file: $(grep -m1 'FAILED (' $OUT/iso$gc.txt)" >> $log
  grep "VmSize" $OUT/iso$gc.txt | awk 'NR%15==1' | tr '\n' ';' >> $log; echo >> $log
done
echo "== doc tests in the two groups of .ci/test_suite.ts ($(( $(date +%s) - S )) s)" >> $log
for g in "src/" "mod.ts server.ts tune.ts README.md docs/"; do
  timeout -k 5 60 deno run --allow-run --allow-read --allow-env .ci/test_suite.ts --doc $g > $OUT/doc_group.txt 2>&1
  grep -E "FAILED \(|^(ok|FAILED) \|" $OUT/doc_group.txt | tail -4 >> $log
done
echo "== instances ($(( $(date +%s) - S )) s)" >> $log
N=150 timeout -k 5 50 deno run -A bench/device_instance_probe.ts >> $log 2>&1
echo "== adapter limit ($(( $(date +%s) - S )) s)" >> $log
N=1500 SECONDS=18 timeout -k 5 85 deno run -A bench/device_adapter_limit.ts >> $log 2>&1
echo "== done ($(( $(date +%s) - S )) s)" >> $log
cat $log
