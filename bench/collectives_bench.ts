/**
 * Collectives across logical devices (one `GPUDevice` each, from one
 * adapter), each group next to the raw host-staged baseline in the same
 * process:
 *
 * - "all-reduce S MiB × N devices" (f32 sum of a source into a separate
 *   destination on every device), timed until every device has run its
 *   write (one completion wait per device, all at once, on both sides):
 *   - raw, host sum (baseline): copy into a `MAP_READ` staging buffer on
 *     every device, map them all in one wait, sum on the CPU, `writeBuffer`
 *     the sum to every device in 4 MiB chunks with a submit after each;
 *   - raw, device sum: map devices 1..N-1, upload them to device 0, sum
 *     there with a kernel, map the result (a second wait), write it to the
 *     others;
 *   - `client.allReduce` with `reduceOn` `host`, `device` and `auto`.
 * - "toClient 64 MiB": raw = copy to staging on A, map, `writeBuffer` on B
 *   in 4 MiB chunks with submits; client = `a.toClient(h, b)`. Timed until
 *   B has run the upload.
 *
 * On the software adapter every device shares the host's cores, so only the
 * ratios mean anything. Knobs: `SIZES_MIB` (default `1,16,64`), `DEVICES`
 * (default `2,4`), `COPY_MIB` (default 64; 0 skips the copy group).
 *
 * Run: `deno bench --allow-env bench/collectives_bench.ts`.
 */

import { type ComputeClient, createClient, type Handle } from "../mod.ts";

const env = (name: string, fallback: string) =>
  Deno.permissions.querySync({ name: "env", variable: name }).state === "granted"
    ? Deno.env.get(name) ?? fallback
    : fallback;
const SIZES = env("SIZES_MIB", "1,16,64").split(",").map(Number);
const COUNTS = env("DEVICES", "2,4").split(",").map(Number);
const COPY_MIB = Number(env("COPY_MIB", "64"));
const MAX_DEVICES = Math.max(...COUNTS, COPY_MIB > 0 ? 2 : 0);
const CHUNK = 4 << 20;
const U = GPUBufferUsage;

// The runtime's devices, and as many raw devices (each from its own adapter request).
const clients: ComputeClient[] = [];
for (let i = 0; i < MAX_DEVICES; i++) clients.push(await createClient({ deviceIndex: i }));
const raw: GPUDevice[] = [];
for (let i = 0; i < MAX_DEVICES; i++) {
  const adapter = (await navigator.gpu.requestAdapter())!;
  raw.push(await adapter.requestDevice({ label: `raw device ${i}` }));
}

const iterations = (mib: number) => (mib >= 64 ? 5 : mib >= 16 ? 10 : 20);

/** f32 data of device i whose sums stay exact. */
function data(i: number, n: number): Float32Array<ArrayBuffer> {
  const a = new Float32Array(n);
  for (let k = 0; k < n; k++) a[k] = (k % 97) + i * 1000;
  return a;
}

/** Writes `data` into `buffer` in 4 MiB chunks with a submit after each. */
function chunked(device: GPUDevice, buffer: GPUBuffer, data: Float32Array<ArrayBuffer>): void {
  const step = CHUNK / 4;
  for (let at = 0; at < data.length; at += step) {
    device.queue.writeBuffer(buffer, at * 4, data, at, Math.min(step, data.length - at));
    device.queue.submit([]);
  }
}

/** acc += x, element-wise (a function of its own, as a hand-written raw path would have). */
function sumInto(acc: Float32Array, x: Float32Array): void {
  for (let k = 0; k < acc.length; k++) acc[k] = acc[k]! + x[k]!;
}

const SUM = `@group(0) @binding(0) var<storage, read_write> acc: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let i = g.x + g.y * n.x * 256u;
  if (i < arrayLength(&acc)) { acc[i] = acc[i] + x[i]; }
}`;

/** The raw all-reduce of one group: buffers, and the host-sum and device-sum variants. */
function rawAllReduce(devices: GPUDevice[], bytes: number) {
  const n = bytes / 4;
  const src = devices.map((d, i) => {
    const b = d.createBuffer({ label: `raw src ${i}`, size: bytes, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    chunked(d, b, data(i, n));
    return b;
  });
  const dst = devices.map((d, i) =>
    d.createBuffer({ label: `raw dst ${i}`, size: bytes, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST })
  );
  const staging = devices.map((d, i) =>
    d.createBuffer({ label: `raw staging ${i}`, size: bytes, usage: U.MAP_READ | U.COPY_DST })
  );
  const d0 = devices[0]!;
  const scratch = d0.createBuffer({ label: "raw scratch", size: bytes, usage: U.STORAGE | U.COPY_DST });
  const module = d0.createShaderModule({ label: "raw sum", code: SUM });
  const pipeline = d0.createComputePipeline({ label: "raw sum", layout: "auto", compute: { module } });
  const bindGroup = d0.createBindGroup({
    label: "raw sum",
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: dst[0]! } }, { binding: 1, resource: { buffer: scratch } }],
  });
  const groups = Math.ceil(n / 256);
  const x = Math.min(groups, d0.limits.maxComputeWorkgroupsPerDimension);
  const copyToStaging = (i: number, from: GPUBuffer) => {
    const e = devices[i]!.createCommandEncoder({ label: `raw copy ${i}` });
    e.copyBufferToBuffer(from, 0, staging[i]!, 0, bytes);
    devices[i]!.queue.submit([e.finish()]);
  };
  const drain = () => Promise.all(devices.map((d) => d.queue.onSubmittedWorkDone()));
  return {
    src,
    dst,
    async hostSum(): Promise<void> {
      devices.forEach((_, i) => copyToStaging(i, src[i]!));
      await Promise.all(staging.map((s) => s.mapAsync(GPUMapMode.READ)));
      const views = staging.map((s) => new Float32Array(s.getMappedRange()));
      const acc = views[0]!;
      for (const v of views.slice(1)) sumInto(acc, v);
      devices.forEach((d, i) => chunked(d, dst[i]!, acc));
      staging.forEach((s) => s.unmap()); // after the writes: unmap detaches every range handed out
      await drain();
    },
    async deviceSum(): Promise<void> {
      const e0 = d0.createCommandEncoder({ label: "raw seed" });
      e0.copyBufferToBuffer(src[0]!, 0, dst[0]!, 0, bytes);
      d0.queue.submit([e0.finish()]);
      for (let i = 1; i < devices.length; i++) copyToStaging(i, src[i]!);
      const others = staging.slice(1);
      await Promise.all(others.map((s) => s.mapAsync(GPUMapMode.READ)));
      for (const s of others) {
        chunked(d0, scratch, new Float32Array(s.getMappedRange()));
        s.unmap();
        const e = d0.createCommandEncoder({ label: "raw sum" });
        const pass = e.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup);
        pass.dispatchWorkgroups(x, Math.ceil(groups / x));
        pass.end();
        d0.queue.submit([e.finish()]);
      }
      copyToStaging(0, dst[0]!);
      await staging[0]!.mapAsync(GPUMapMode.READ);
      const result = new Float32Array(staging[0]!.getMappedRange());
      for (let i = 1; i < devices.length; i++) chunked(devices[i]!, dst[i]!, result);
      staging[0]!.unmap();
      await drain();
    },
    async check(expected: Float32Array): Promise<void> {
      devices.forEach((_, i) => copyToStaging(i, dst[i]!));
      await Promise.all(staging.map((s) => s.mapAsync(GPUMapMode.READ)));
      staging.forEach((s, i) => {
        const v = new Float32Array(s.getMappedRange());
        for (let k = 0; k < n; k += 997) {
          if (v[k] !== expected[k]) throw new Error(`raw device ${i}: wrong sum at ${k}`);
        }
        s.unmap();
      });
    },
  };
}

for (const count of COUNTS) {
  for (const mib of SIZES) {
    const bytes = mib << 20;
    const n = bytes / 4;
    const group = `all-reduce ${mib} MiB × ${count} devices`;
    const set = clients.slice(0, count);
    const devices = set.map((c) => c.deviceId.index);
    const src: Handle[] = set.map((c, i) => c.create(data(i, n)));
    const dst: Handle[] = set.map((c) => c.empty(bytes));
    const r = rawAllReduce(raw.slice(0, count), bytes);
    const expected = new Float32Array(n);
    for (let i = 0; i < count; i++) {
      const d = data(i, n);
      for (let k = 0; k < n; k++) expected[k] = expected[k]! + d[k]!;
    }
    const runtime = async (reduceOn: "host" | "device" | "auto") => {
      await Promise.all(set.map((c, i) => c.allReduce(src[i]!, dst[i]!, { dtype: "f32", devices, reduceOn })));
      await Promise.all(set.map((c) => c.sync()));
    };
    // Every variant is checked once before it is timed.
    await r.hostSum();
    await r.check(expected);
    await r.deviceSum();
    await r.check(expected);
    for (const site of ["host", "device", "auto"] as const) {
      await runtime(site);
      for (const [i, c] of set.entries()) {
        const v = await c.read(dst[i]!, Float32Array);
        for (let k = 0; k < n; k += 997) {
          if (v[k] !== expected[k]) throw new Error(`${site}: device ${i} wrong at ${k}`);
        }
      }
    }
    const it = iterations(mib);
    // Async functions: Deno.bench awaits only those whose constructor is AsyncFunction.
    Deno.bench({ group, name: "raw host-staged, host sum", baseline: true, n: it }, async () => await r.hostSum());
    Deno.bench({ group, name: "raw host-staged, device sum", n: it }, async () => await r.deviceSum());
    Deno.bench({ group, name: "client.allReduce, reduceOn host", n: it }, async () => await runtime("host"));
    Deno.bench({ group, name: "client.allReduce, reduceOn device", n: it }, async () => await runtime("device"));
    Deno.bench({ group, name: "client.allReduce, reduceOn auto", n: it }, async () => await runtime("auto"));
  }
}

if (COPY_MIB > 0) {
  const bytes = COPY_MIB << 20;
  const group = `toClient ${COPY_MIB} MiB`;
  const [a, b] = [clients[0]!, clients[1]!];
  const payload = data(3, bytes / 4);
  const h = a.create(payload);
  const [ra, rb] = [raw[0]!, raw[1]!];
  const rawSrc = ra.createBuffer({ label: "raw copy src", size: bytes, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  chunked(ra, rawSrc, payload);
  const rawStaging = ra.createBuffer({ label: "raw copy staging", size: bytes, usage: U.MAP_READ | U.COPY_DST });
  const rawDst = rb.createBuffer({ label: "raw copy dst", size: bytes, usage: U.STORAGE | U.COPY_DST });
  const copied = await a.toClient(h, b);
  const back = await b.read(copied, Float32Array);
  for (let k = 0; k < back.length; k += 997) if (back[k] !== payload[k]) throw new Error(`toClient wrong at ${k}`);
  copied.release();
  Deno.bench({ group, name: "raw copy, map, 4 MiB writeBuffer chunks", baseline: true, n: 10 }, async () => {
    const e = ra.createCommandEncoder({ label: "raw copy" });
    e.copyBufferToBuffer(rawSrc, 0, rawStaging, 0, bytes);
    ra.queue.submit([e.finish()]);
    await rawStaging.mapAsync(GPUMapMode.READ);
    const range = rawStaging.getMappedRange();
    for (let at = 0; at < bytes; at += CHUNK) {
      rb.queue.writeBuffer(rawDst, at, range, at, Math.min(CHUNK, bytes - at));
      rb.queue.submit([]);
    }
    rawStaging.unmap();
    await rb.queue.onSubmittedWorkDone();
  });
  Deno.bench({ group, name: "client.toClient", n: 10 }, async () => {
    const copy = await a.toClient(h, b);
    await b.sync();
    copy.release();
  });
}
