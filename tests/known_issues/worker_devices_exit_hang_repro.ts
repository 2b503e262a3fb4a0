/**
 * Repro of a hang at exit with no code of this project: `WORKERS` module
 * Workers (default 3) each request a WebGPU device, map a 4 MiB buffer,
 * destroy the device (unless `DESTROY=0`), post "done" and close themselves;
 * the main thread prints "done" once every Worker has said so, and the
 * process should then exit (with `EXIT=1`, the main thread calls
 * `Deno.exit(0)` right after). On an NVIDIA H100 (driver 580.159.04, Deno 2.9.6,
 * `DENO_WEBGPU_BACKEND` unset) 4 of 16 such processes never exited: their
 * Worker threads sat in `futex_wait` and `rt_mutex_schedule` with two devices'
 * driver threads alive. One Worker, or Workers that only request an adapter,
 * never hung (`bench/RESULTS.md`, run 33).
 *
 * As a Worker: the device's work. As the main module: starts the Workers.
 */

declare const WorkerGlobalScope: unknown;

if (typeof WorkerGlobalScope !== "undefined") {
  const adapter = await navigator.gpu.requestAdapter();
  const destroy = (self as unknown as { name: string }).name !== "keep";
  if (adapter !== null) {
    const device = await adapter.requestDevice();
    const buffer = device.createBuffer({
      label: "repro staging",
      size: 4 << 20,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    await buffer.mapAsync(GPUMapMode.READ);
    buffer.unmap();
    if (destroy) device.destroy();
  }
  const scope = self as unknown as { postMessage(m: unknown): void; close(): void };
  scope.postMessage("done");
  scope.close();
} else if (import.meta.main) {
  const n = Number(Deno.env.get("WORKERS") ?? 3);
  const name = Deno.env.get("DESTROY") === "0" ? "keep" : "destroy";
  const workers = Array.from({ length: n }, () => new Worker(import.meta.url, { type: "module", name }));
  await Promise.all(workers.map((w) => new Promise((done) => w.onmessage = done)));
  console.log("done");
  if (Deno.env.get("EXIT") === "1") Deno.exit(0);
}
