/**
 * The Worker of `collectives_workers.ts`: owns one device with a source, a
 * destination and a staging buffer, and does its part of a raw host-staged
 * all-reduce over a `SharedArrayBuffer` of N + 1 slices: `stage` (its source
 * into its slice, 4 MiB mapped pieces at a time), `reduce` (its 1/N of the
 * elements summed over every slice into the last one), `upload` (the sum into
 * its destination in 4 MiB chunks with submits, then the completion wait).
 * `close` destroys the device and closes the Worker (never `terminate()` a
 * Worker holding a live device).
 *
 * @module
 */

/// <reference lib="deno.worker" />

const U = GPUBufferUsage;
const CHUNK = 4 << 20;
let device: GPUDevice;
let src: GPUBuffer;
let dst: GPUBuffer;
let staging: GPUBuffer;
let sab: SharedArrayBuffer;
let parts = 0;
let rank = 0;
let n = 0;

self.onmessage = async (ev: MessageEvent) => {
  const m = ev.data;
  if (m.op === "init") {
    ({ sab, parts, rank, n } = m);
    device = await (await navigator.gpu.requestAdapter())!.requestDevice({ label: `worker device ${rank}` });
    const usage = U.STORAGE | U.COPY_SRC | U.COPY_DST;
    src = device.createBuffer({ label: "worker src", size: n * 4, usage });
    dst = device.createBuffer({ label: "worker dst", size: n * 4, usage });
    staging = device.createBuffer({ label: "worker staging", size: n * 4, usage: U.MAP_READ | U.COPY_DST });
    const a = new Float32Array(n);
    for (let k = 0; k < n; k++) a[k] = (k % 97) + rank * 1000;
    device.queue.writeBuffer(src, 0, a);
    await device.queue.onSubmittedWorkDone();
  } else if (m.op === "stage") {
    const e = device.createCommandEncoder({ label: "worker stage" });
    e.copyBufferToBuffer(src, 0, staging, 0, n * 4);
    device.queue.submit([e.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const slice = new Uint8Array(sab, rank * n * 4, n * 4);
    for (let at = 0; at < n * 4; at += CHUNK) {
      slice.set(new Uint8Array(staging.getMappedRange(at, Math.min(CHUNK, n * 4 - at))), at);
    }
    staging.unmap();
  } else if (m.op === "reduce") {
    const seg = Math.ceil(n / parts);
    const lo = rank * seg;
    const hi = Math.min(n, lo + seg);
    const all = new Float32Array(sab);
    const out = parts * n;
    for (let k = lo; k < hi; k++) {
      let s = all[k]!;
      for (let i = 1; i < parts; i++) s = Math.fround(s + all[i * n + k]!);
      all[out + k] = s;
    }
  } else if (m.op === "upload") {
    // Deno accepts SharedArrayBuffer views in writeBuffer; the cast only satisfies its DOM typings.
    const sum = new Float32Array(sab, parts * n * 4, n) as unknown as Float32Array<ArrayBuffer>;
    for (let at = 0; at < n; at += CHUNK / 4) {
      device.queue.writeBuffer(dst, at * 4, sum, at, Math.min(CHUNK / 4, n - at));
      device.queue.submit([]);
    }
    await device.queue.onSubmittedWorkDone();
  } else if (m.op === "check") {
    const e = device.createCommandEncoder({ label: "worker check" });
    e.copyBufferToBuffer(dst, 0, staging, 0, n * 4);
    device.queue.submit([e.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const v = new Float32Array(staging.getMappedRange());
    const base = (1000 * parts * (parts - 1)) / 2;
    let bad = 0;
    for (let k = 0; k < n; k += 997) if (v[k] !== (k % 97) * parts + base) bad++;
    staging.unmap();
    if (bad > 0) throw new Error(`worker ${rank}: ${bad} wrong sums`);
  } else if (m.op === "close") {
    device.destroy();
    self.postMessage({ op: "close" });
    self.close();
    return;
  }
  self.postMessage({ op: m.op });
};
