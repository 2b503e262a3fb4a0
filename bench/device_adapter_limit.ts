/**
 * Looks for a per-process limit on adapters or devices (issue 28: on an H100 `deno task test` finds no adapter after
 * 44 files, with GPU memory, threads and file descriptors back at their baselines between files). Each mode repeats
 * one step until `requestAdapter()` finds nothing, `N` steps pass, or `SECONDS` run out, and prints how far it got,
 * with the process's virtual size and resident memory every `EVERY` steps:
 *
 * - `adapter`: `navigator.gpu.requestAdapter()`;
 * - `device`: an adapter, a device, one buffer written, `device.destroy()`;
 * - `client`: `createClient()`, a 4 KiB read, `destroy()`;
 * - `index`: `createClient({ deviceIndex: 0 })`, a read, `closeDevices()`.
 *
 * Run (GPU machine): `MODES=adapter,device,client,index deno run -A bench/device_adapter_limit.ts`.
 * @module
 */
import { closeDevices, createClient } from "../mod.ts";

const N = Number(Deno.env.get("N") ?? 1500);
const SECONDS = Number(Deno.env.get("SECONDS") ?? 40);
const EVERY = Number(Deno.env.get("EVERY") ?? 250);
const modes = (Deno.env.get("MODES") ?? "adapter,device,client,index").split(",");
const vm = () => {
  const s = Deno.readTextFileSync("/proc/self/status");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return `VmSize ${(kb("VmSize") / 1048576).toFixed(1)} GiB, RSS ${(kb("VmRSS") / 1024).toFixed(0)} MiB, threads ${
    kb("Threads")
  }, fds ${[...Deno.readDirSync("/proc/self/fd")].length}`;
};

async function step(mode: string): Promise<boolean> {
  if (mode === "adapter") return (await navigator.gpu.requestAdapter()) !== null;
  if (mode === "device") {
    const adapter = await navigator.gpu.requestAdapter();
    if (adapter === null) return false;
    const d = await adapter.requestDevice({ label: "limit probe device" });
    const b = d.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label: "probe" });
    d.queue.writeBuffer(b, 0, new Uint8Array(4096));
    await d.queue.onSubmittedWorkDone();
    d.destroy();
    return true;
  }
  try {
    const c = await createClient(mode === "index" ? { deviceIndex: 0 } : {});
    await c.read(c.create(new Uint8Array(4096)));
    if (mode === "index") await closeDevices();
    else c.destroy();
    return true;
  } catch (e) {
    console.log(`  ${mode}: ${(e as Error).message}`);
    return false;
  }
}

for (const mode of modes) {
  const t0 = performance.now();
  let i = 0;
  let ok = true;
  console.log(`${mode} start: ${vm()}`);
  while (i < N && performance.now() - t0 < SECONDS * 1000) {
    ok = await step(mode);
    if (!ok) break;
    i++;
    if (i % EVERY === 0) console.log(`${mode} ${i}: ${vm()}, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  console.log(
    `${mode}: ${ok ? `${i} steps, none failed` : `step ${i + 1} found no adapter`} in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s; ${vm()}`,
  );
  if (!ok) break;
}
