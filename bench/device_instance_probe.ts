/**
 * Counts how many WebGPU instances one process can make (issue 28: on an H100 `deno task test` finds no adapter after
 * 44 files, with GPU memory, threads and descriptors back at their baselines between files). Each Worker is a new
 * isolate, so a new `navigator.gpu` instance: it requests an adapter and a device, writes a buffer, destroys the
 * device and closes. Prints the first Worker that found no adapter, if any, and a line every 50.
 *
 * Run (GPU machine): `N=400 deno run -A bench/device_instance_probe.ts` (`DEVICE=0`: adapter only).
 * @module
 */
const N = Number(Deno.env.get("N") ?? 400);
const device = Deno.env.get("DEVICE") !== "0";
const src = `
self.onmessage = async () => {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) { self.postMessage("no adapter"); self.close(); return; }
  if (${device}) {
    const d = await adapter.requestDevice();
    const b = d.createBuffer({ size: 1024, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label: "probe" });
    d.queue.writeBuffer(b, 0, new Uint8Array(1024));
    await d.queue.onSubmittedWorkDone();
    d.destroy();
  }
  self.postMessage("ok");
  self.close();
};`;
const url = URL.createObjectURL(new Blob([src], { type: "application/javascript" }));
const t0 = performance.now();
let firstFail = -1;
let fails = 0;
for (let i = 1; i <= N; i++) {
  const w = new Worker(url, { type: "module" });
  const got = await new Promise<string>((resolve) => {
    w.onmessage = (e) => resolve(String(e.data));
    w.onerror = (e) => {
      e.preventDefault();
      resolve(`error ${e.message}`);
    };
    w.postMessage(0);
  });
  if (got !== "ok") {
    fails++;
    if (firstFail < 0) firstFail = i;
  }
  if (i % 50 === 0 || (got !== "ok" && fails <= 3)) {
    console.log(`worker ${i}: ${got}; ${fails} failed so far; ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}
// main thread too, after the Workers
const a = await navigator.gpu.requestAdapter();
console.log(
  `instances ${N} (device ${device}): first without an adapter ${
    firstFail < 0 ? "none" : firstFail
  }, ${fails} failed; main thread adapter afterwards: ${a ? "yes" : "none"}`,
);
