/**
 * Exhaustive sweep of the matmul kernels (`examples/_matmul_kernels.ts`) on
 * raw WebGPU, no runtime: for each kernel and each size, compile, warm up,
 * then time N dispatches with timestamp queries (a pass per dispatch, one
 * submit, one map) and print milliseconds and TFLOP/s. Every kernel is first
 * checked against a float64 CPU reference on small odd shapes, and each timed
 * size on a sample of entries. It is the "best by exhaustive measurement"
 * the tuner's pick is compared with.
 *
 * Run (H200, about 1–2 minutes):
 *   deno run --allow-env --allow-write bench/matmul_sweep.ts
 * Environment:
 *   SIZES=512,1024,2048,4096   cube sizes (M = N = K), or MxNxK entries
 *   KERNELS=regex              only kernels whose name matches
 *   TARGET_MS=250              device time to spend per kernel and size
 *   OUT=dir                    also write dir/matmul_sweep.json
 * On llvmpipe: SIZES=64,128 deno run --allow-env bench/matmul_sweep.ts
 *
 * @module
 */

import {
  MATMUL_CANDIDATES,
  MATMUL_SWEEP_EXTRA,
  type MatmulConfig,
  matmulFootprint,
  matmulGrid,
  type MatmulShape,
  matmulSupports,
  matmulWgsl,
} from "../examples/_matmul_kernels.ts";

const env = (k: string) =>
  Deno.permissions.querySync({ name: "env", variable: k }).state === "granted" ? Deno.env.get(k) : undefined;
const SIZES: MatmulShape[] = (env("SIZES") ?? "512,1024,2048,4096").split(",").map((s) => {
  const [m, n = m, k = m] = s.toLowerCase().split("x").map(Number);
  return { m: m!, n: n!, k: k! };
});
const FILTER = new RegExp(env("KERNELS") ?? ".");
const TARGET_MS = Number(env("TARGET_MS") ?? 250);
const KERNELS = [...MATMUL_CANDIDATES, ...MATMUL_SWEEP_EXTRA].filter((k) => FILTER.test(k.name));

const adapter = await navigator.gpu.requestAdapter();
if (adapter === null) throw new Error("no WebGPU adapter");
const requiredLimits: Record<string, number> = {};
for (const key in adapter.limits) {
  const v = (adapter.limits as unknown as Record<string, unknown>)[key];
  if (typeof v === "number") requiredLimits[key] = v;
}
const timestamps = adapter.features.has("timestamp-query");
const device = await adapter.requestDevice({
  requiredFeatures: timestamps ? ["timestamp-query"] : [],
  requiredLimits,
});
const info = adapter.info;
console.log(`adapter: ${info.vendor} / ${info.architecture} / ${info.description}; Deno ${Deno.version.deno}`);
console.log(`timing: ${timestamps ? "timestamp queries, a pass per dispatch" : "wall clock (no timestamp-query)"}`);

const layout = device.createBindGroupLayout({
  entries: [0, 1, 2, 3].map((binding) => ({
    binding,
    visibility: GPUShaderStage.COMPUTE,
    buffer: { type: binding === 3 ? "read-only-storage" as const : "storage" as const },
  })),
});
const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });

/** Deterministic values in [-1, 1). */
function random(n: number, seed: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

async function compile(cfg: MatmulConfig): Promise<GPUComputePipeline | string> {
  const fp = matmulFootprint(cfg);
  if (fp.invocations > device.limits.maxComputeInvocationsPerWorkgroup) return "too many invocations";
  if (fp.sharedBytes > device.limits.maxComputeWorkgroupStorageSize) return "too much workgroup memory";
  device.pushErrorScope("validation");
  const t0 = performance.now();
  const pipeline = device.createComputePipeline({
    label: cfg.name,
    layout: pipelineLayout,
    compute: { module: device.createShaderModule({ code: matmulWgsl(cfg) }), entryPoint: "main" },
  });
  const ms = performance.now() - t0;
  const err = await device.popErrorScope();
  if (err !== null) return `compile error: ${err.message.split("\n").slice(0, 4).join(" | ")}`;
  compileMs.set(cfg.name, ms);
  return pipeline;
}
const compileMs = new Map<string, number>();

interface Problem {
  shape: MatmulShape;
  a: Float32Array<ArrayBuffer>;
  b: Float32Array<ArrayBuffer>;
  buffers: GPUBuffer[];
}

function problem(shape: MatmulShape): Problem {
  const { m, n, k } = shape;
  const a = random(m * k, 1);
  const b = random(k * n, 2);
  const make = (bytes: number, usage: number) => device.createBuffer({ size: Math.max(16, bytes), usage });
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const buffers = [
    make(a.byteLength, storage),
    make(b.byteLength, storage),
    make(m * n * 4, storage),
    make(16, storage),
  ];
  device.queue.writeBuffer(buffers[0]!, 0, a);
  device.queue.writeBuffer(buffers[1]!, 0, b);
  device.queue.writeBuffer(buffers[3]!, 0, new Uint32Array([m, n, k, 0]));
  return { shape, a, b, buffers };
}

async function readC(p: Problem): Promise<Float32Array> {
  const bytes = p.shape.m * p.shape.n * 4;
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(p.buffers[2]!, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  return out;
}

/** Worst |gpu − ref| / Σ|a·b| over the checked entries (all of them, or `samples` random ones). */
function check(p: Problem, got: Float32Array, samples?: number): number {
  const { m, n, k } = p.shape;
  let worst = 0;
  const entry = (i: number, j: number) => {
    let sum = 0;
    let abs = 0;
    for (let q = 0; q < k; q++) {
      const x = p.a[i * k + q]! * p.b[q * n + j]!;
      sum += x;
      abs += Math.abs(x);
    }
    const e = Math.abs(got[i * n + j]! - sum) / Math.max(abs, 1e-30);
    worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
  };
  if (samples === undefined) { for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) entry(i, j); }
  else {
    let s = 12345;
    for (let t = 0; t < samples; t++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      entry(s % m, (s >>> 7) % n);
    }
    entry(m - 1, n - 1);
  }
  return worst;
}

function bindGroup(pipeline: GPUComputePipeline, p: Problem): GPUBindGroup {
  return device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: p.buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
}

/** Device milliseconds of each of `reps` dispatches, one submit and one map. */
async function time(cfg: MatmulConfig, pipeline: GPUComputePipeline, p: Problem, reps: number): Promise<number[]> {
  const bg = bindGroup(pipeline, p);
  const [x, y] = matmulGrid(cfg, p.shape);
  const enc = device.createCommandEncoder();
  if (!timestamps) {
    const t0 = performance.now();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bg);
    for (let r = 0; r < reps; r++) pass.dispatchWorkgroups(x, y);
    pass.end();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    return Array(reps).fill(Math.max(0, performance.now() - t0 - 11) / reps);
  }
  const qs = device.createQuerySet({ type: "timestamp", count: 2 * reps });
  for (let r = 0; r < reps; r++) {
    const pass = enc.beginComputePass({
      timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * r, endOfPassWriteIndex: 2 * r + 1 },
    });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(x, y);
    pass.end();
  }
  const resolve = device.createBuffer({
    size: 16 * reps,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const read = device.createBuffer({ size: 16 * reps, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  enc.resolveQuerySet(qs, 0, 2 * reps, resolve, 0);
  enc.copyBufferToBuffer(resolve, 0, read, 0, 16 * reps);
  device.queue.submit([enc.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const t = new BigUint64Array(read.getMappedRange());
  const ms = Array.from({ length: reps }, (_, r) => Number(t[2 * r + 1]! - t[2 * r]!) / 1e6);
  read.unmap();
  for (const o of [read, resolve, qs]) o.destroy();
  return ms;
}

// 1. Correctness on small odd shapes.
const checks: MatmulShape[] = [{ m: 67, n: 93, k: 45 }, { m: 96, n: 80, k: 48 }, { m: 130, n: 132, k: 36 }];
const pipelines = new Map<string, GPUComputePipeline>();
const failed = new Map<string, string>();
for (const cfg of KERNELS) {
  const p = await compile(cfg);
  if (typeof p === "string") failed.set(cfg.name, p);
  else pipelines.set(cfg.name, p);
}
for (const shape of checks) {
  const pr = problem(shape);
  for (const cfg of KERNELS) {
    const pipeline = pipelines.get(cfg.name);
    if (pipeline === undefined || !matmulSupports(cfg, shape)) continue;
    await time(cfg, pipeline, pr, 1);
    const err = check(pr, await readC(pr));
    if (!(err < 1e-5)) failed.set(cfg.name, `wrong result at ${shape.m}x${shape.n}x${shape.k}: relative error ${err}`);
  }
  for (const b of pr.buffers) b.destroy();
}
for (const [name, why] of failed) console.log(`  ${name}: ${why}`);
console.log(`correctness: ${KERNELS.length - failed.size} of ${KERNELS.length} kernels match the float64 reference`);

// 2. Timing.
interface Row {
  kernel: string;
  size: string;
  medianMs: number;
  minMs: number;
  tflops: number;
  reps: number;
}
const rows: Row[] = [];
const t0 = performance.now();
for (const shape of SIZES) {
  const label = shape.m === shape.n && shape.n === shape.k ? `${shape.m}³` : `${shape.m}x${shape.n}x${shape.k}`;
  const pr = problem(shape);
  const flop = 2 * shape.m * shape.n * shape.k;
  for (const cfg of KERNELS) {
    const pipeline = pipelines.get(cfg.name);
    if (pipeline === undefined || failed.has(cfg.name) || !matmulSupports(cfg, shape)) continue;
    const warm = await time(cfg, pipeline, pr, 2);
    const est = Math.max(Math.min(...warm), 1e-3);
    if (est > 5000) {
      console.log(`  ${cfg.name} ${label}: ${est.toFixed(0)} ms per dispatch, skipped`);
      continue;
    }
    const reps = Math.max(3, Math.min(50, Math.round(TARGET_MS / est)));
    const ms = (await time(cfg, pipeline, pr, reps)).sort((a, b) => a - b);
    const median = ms[ms.length >> 1]!;
    if (rows.filter((r) => r.kernel === cfg.name).length === 0) {
      const err = check(pr, await readC(pr), 64);
      if (!(err < 1e-4)) console.log(`  ${cfg.name} ${label}: WRONG (relative error ${err})`);
    }
    rows.push({ kernel: cfg.name, size: label, medianMs: median, minMs: ms[0]!, tflops: flop / median / 1e9, reps });
  }
  for (const b of pr.buffers) b.destroy();
}

// 3. Table: kernels down, sizes across (median ms and TFLOP/s), best per size marked.
const sizes = [...new Set(rows.map((r) => r.size))];
const best = new Map(sizes.map((s) => [s, Math.min(...rows.filter((r) => r.size === s).map((r) => r.medianMs))]));
console.log(`\n${"kernel".padEnd(28)}${sizes.map((s) => s.padStart(22)).join("")}   compile`);
for (const cfg of KERNELS) {
  const cells = sizes.map((s) => {
    const r = rows.find((x) => x.kernel === cfg.name && x.size === s);
    if (r === undefined) return "—".padStart(22);
    const mark = r.medianMs === best.get(s) ? "*" : " ";
    const rate = r.tflops >= 1 ? `${r.tflops.toFixed(2)} TF` : `${(r.tflops * 1000).toFixed(1)} GF`;
    return `${r.medianMs.toFixed(3)} ms ${rate.padStart(8)}${mark}`.padStart(22);
  });
  const c = compileMs.get(cfg.name);
  console.log(`${cfg.name.padEnd(28)}${cells.join("")}   ${c === undefined ? "" : `${c.toFixed(0)} ms`}`);
}
console.log(
  `\n(* fastest per size; median of the timed dispatches; sweep took ${
    ((performance.now() - t0) / 1000).toFixed(1)
  } s)`,
);
const out = env("OUT");
if (out !== undefined) {
  await Deno.writeTextFile(`${out}/matmul_sweep.json`, JSON.stringify({ adapter: info.description, rows }, null, 1));
}
device.destroy();
