/**
 * End-to-end demo of `@denogpu/runtime`: prints the adapter, runs elementwise
 * ops, a multi-pass shared-memory reduction and a tiled matrix multiply, checks
 * every result against a CPU reference, times each stage, and reports memory.
 * Before it starts, and before its one long stage (the matmul), it prints what
 * comes and about how long it takes on a GPU and on the software adapter.
 * Exits with code 1 when any check fails.
 *
 * Run it with `deno task demo` (`deno run --allow-env examples/demo.ts`). On a
 * machine without a GPU Deno offers a software adapter (llvmpipe), so "GPU"
 * timings there measure the CPU.
 *
 * @module
 */

import {
  type ComputeClient,
  createClient,
  defineKernel,
  formatBytes,
  formatMemoryReport,
  formatMemoryUsage,
  type Handle,
} from "../mod.ts";

const N = 1 << 20; // elements of the elementwise and reduction stages
const MM = 512; // matrix size (MM × MM × MM)
const TILE = 16;
const EPS = 2 ** -23; // f32 machine epsilon (unit roundoff is EPS / 2)

/**
 * How long the demo and its one long stage take, printed before they start. On the software adapter: measured with
 * `deno task demo` on a VM of 2 shared cores (Mesa's llvmpipe through Vulkan). On a GPU: estimated, since the GPU's
 * share is milliseconds and the rest is the host's (its CPU reference, shader compilation, Deno's 10 ms wait per read).
 */
const TAKES = {
  demo: { gpu: "about 2 s (estimated)", software: "about 10 s (measured: 7.5–15 s)" },
  matmul: { gpu: "under a second (estimated)", software: "about 8 s (measured: 6–14 s)" },
};

/** Prints what comes next and how long it takes, before it starts. */
function announce(what: string, takes: { gpu: string; software: string }): void {
  console.log(`  ${what}: ${takes.gpu} on a GPU, ${takes.software} on the software adapter.`);
}

let failures = 0;

function check(name: string, ok: boolean, detail: string): void {
  if (!ok) failures++;
  console.log(`  ${ok ? "PASS" : "FAIL"}  ${name.padEnd(34)} ${detail}`);
}

const section = (title: string) => console.log(`\n── ${title} ${"─".repeat(Math.max(0, 74 - title.length))}`);

const since = (t0: number) => performance.now() - t0;
const fmtMs = (ms: number) => `${ms.toFixed(1)} ms`;
const f32 = (b: Uint8Array) => new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
const u32 = (b: Uint8Array) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** out = a * b + c (three input buffers), n from the info word. */
const fma = defineKernel({
  name: "fma",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> n: u32;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < n) { out[g.x] = a[g.x] * b[g.x] + c[g.x]; }
}`,
});

/** y = x > 0 ? x : alpha * x (leaky ReLU); n and alpha are info scalars. */
const leakyRelu = defineKernel({
  name: "leaky_relu",
  wgsl: `
struct Info { n: u32, alpha: f32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read> info: Info;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < info.n) { let v = x[g.x]; y[g.x] = select(info.alpha * v, v, v > 0.0); }
}`,
});

const RED_WG = 256;
const RED_PER_THREAD = 8;
const RED_SPAN = RED_WG * RED_PER_THREAD; // elements consumed per workgroup

/** One pass of a sum: each workgroup reduces RED_SPAN elements of src to dst[workgroup]. */
function reduceKernel(type: "u32" | "f32") {
  return defineKernel({
    name: `sum_${type}`,
    wgsl: `
const WG: u32 = ${RED_WG}u;
const PER_THREAD: u32 = ${RED_PER_THREAD}u;
@group(0) @binding(0) var<storage, read_write> src: array<${type}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${type}>;
@group(0) @binding(2) var<storage, read> n: u32;
var<workgroup> tile: array<${type}, WG>;
@compute @workgroup_size(WG) fn main(@builtin(local_invocation_id) l: vec3u, @builtin(workgroup_id) w: vec3u) {
  let base = w.x * WG * PER_THREAD + l.x;
  var acc = ${type}(0);
  for (var i = 0u; i < PER_THREAD; i++) {
    let j = base + i * WG;
    if (j < n) { acc += src[j]; }
  }
  tile[l.x] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (l.x < s) { tile[l.x] += tile[l.x + s]; }
    workgroupBarrier();
  }
  if (l.x == 0u) { dst[w.x] = tile[0]; }
}`,
  });
}
const sumU32 = reduceKernel("u32");
const sumF32 = reduceKernel("f32");

/** C (m×n) = A (m×k) · B (k×n), row-major, 16×16 tiles staged in workgroup memory. */
const matmul = defineKernel({
  name: "matmul_tiled",
  wgsl: `
const T: u32 = ${TILE}u;
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> d: Dims;
var<workgroup> ta: array<array<f32, T>, T>;
var<workgroup> tb: array<array<f32, T>, T>;
@compute @workgroup_size(T, T) fn main(@builtin(local_invocation_id) l: vec3u, @builtin(workgroup_id) w: vec3u) {
  let row = w.y * T + l.y;
  let col = w.x * T + l.x;
  var acc = 0.0;
  for (var t = 0u; t < d.k; t += T) {
    var av = 0.0;
    var bv = 0.0;
    if (row < d.m && t + l.x < d.k) { av = a[row * d.k + t + l.x]; }
    if (col < d.n && t + l.y < d.k) { bv = b[(t + l.y) * d.n + col]; }
    ta[l.y][l.x] = av;
    tb[l.y][l.x] = bv;
    workgroupBarrier();
    for (var i = 0u; i < T; i++) { acc += ta[l.y][i] * tb[i][l.x]; }
    workgroupBarrier();
  }
  if (row < d.m && col < d.n) { c[row * d.n + col] = acc; }
}`,
});

function printAdapter(client: ComputeClient): void {
  section("Adapter");
  const { identity: id, features: f, hardware: h, limits } = client.properties;
  const row = (label: string, text: string) => console.log(`  ${label.padEnd(13)} ${text}`);
  const lim = (k: string) => limits[k]?.toLocaleString("en-US") ?? "?";
  const bytes = (k: string, v = limits[k]) => v === undefined ? "?" : formatBytes(v);
  row("description", id.description || "(none)");
  const vendorHex = /^\d+$/.test(id.vendor) ? ` (vendor id 0x${Number(id.vendor).toString(16)})` : "";
  if (id.vendor) row("vendor", id.vendor + vendorHex);
  if (id.architecture) row("architecture", id.architecture);
  const software = id.isFallbackAdapter || /llvmpipe|lavapipe|swiftshader/i.test(id.description);
  row("fallback", `${id.isFallbackAdapter}${software ? " (software adapter: kernels run on the CPU)" : ""}`);
  row("features", `${f.all.join(", ") || "(none)"}; timing method "${client.properties.timingMethod}"`);
  row("workgroups", `≤ ${h.maxUnitsPerCube} invocations, size ≤ [${h.maxCubeDim}], ≤ ${h.maxCubeCount[0]} per dim`);
  row("shared mem", `${bytes("maxComputeWorkgroupStorageSize")} per workgroup`);
  row("subgroups", `${h.planeSizeMin}–${h.planeSizeMax} lanes`);
  row("buffer size", `≤ ${bytes("maxBufferSize")}, ≤ ${bytes("maxStorageBufferBindingSize")} per binding`);
  row("bindings", `${lim("maxStorageBuffersPerShaderStage")} storage buffers per shader stage`);
}

async function elementwise(client: ComputeClient): Promise<Handle[]> {
  section(`Elementwise on ${N.toLocaleString("en-US")} f32`);
  const r = rng(1);
  const a = Float32Array.from({ length: N }, () => r() * 4 - 2);
  const b = Float32Array.from({ length: N }, () => r() * 4 - 2);
  const c = Float32Array.from({ length: N }, () => r() * 4 - 2);
  let t0 = performance.now();
  const [ha, hb, hc] = [client.create(a), client.create(b), client.create(c)];
  const [hOut, hRelu] = [client.empty(N * 4), client.empty(N * 4)];
  const groups = Math.ceil(N / 256);
  const reluInfo = new Uint32Array([N, 0]);
  new Float32Array(reluInfo.buffer)[1] = 0.125; // info struct { n: u32, alpha: f32 }
  client.launch(fma, [groups], [ha, hb, hc, hOut], new Uint32Array([N]));
  client.launch(leakyRelu, [groups], [hOut, hRelu], reluInfo);
  const [outB, reluB] = await client.readMany([hOut, hRelu]);
  const size = formatBytes(N * 4);
  console.log(`  upload 3 × ${size} + fma + leaky_relu + read 2 × ${size}: ${fmtMs(since(t0))} (first run compiles)`);
  const [out, relu] = [f32(outB!), f32(reluB!)];
  // The device may or may not fuse a*b+c into one rounding: allow one rounding
  // of each term, i.e. |err| ≤ EPS × (|a·b| + |c|).
  let [worst, exact, reluBad] = [0, 0, 0];
  for (let i = 0; i < N; i++) {
    const ab = a[i]! * b[i]!;
    const want = Math.fround(Math.fround(ab) + c[i]!);
    const got = out[i]!;
    if (got === want) exact++;
    worst = Math.max(worst, Math.abs(got - want) / (EPS * (Math.abs(ab) + Math.abs(c[i]!))));
    if (relu[i] !== (got > 0 ? got : Math.fround(0.125 * got))) reluBad++; // leaky_relu read the device's fma output
  }
  check("fma out = a*b + c", worst <= 1, `max err ${worst.toFixed(3)} × eps·(|ab|+|c|), ${exact} of ${N} bit-exact`);
  check("leaky_relu (alpha from info)", reluBad === 0, `${reluBad} mismatches (exact compare)`);

  const reps = 20;
  t0 = performance.now();
  for (let i = 0; i < reps; i++) client.launch(fma, [groups], [ha, hb, hc, hOut], new Uint32Array([N]));
  await client.sync();
  const per = since(t0) / reps;
  console.log(
    `  fma × ${reps} + one sync: ${fmtMs(per)} per launch (includes the amortised sync wait), ` +
      `${(16 * N / per / 1e6).toFixed(2)} GB/s effective`,
  );
  return [ha, hb, hc, hOut, hRelu];
}

async function reduction(client: ComputeClient): Promise<Handle[]> {
  section(`Reduction: sum of ${N.toLocaleString("en-US")} elements (shared-memory tree, multi-pass)`);
  const r = rng(2);
  const ints = Uint32Array.from({ length: N }, () => Math.floor(r() * 1000));
  const floats = Float32Array.from({ length: N }, () => r());
  const partials = Math.ceil(N / RED_SPAN);
  const [hInts, hFloats] = [client.create(ints), client.create(floats)];
  const [p1, p2] = [client.empty(partials * 4), client.empty(partials * 4)];
  /** Enqueues passes until one element remains; returns the handle that holds it. */
  const sum = (kernel: typeof sumU32, src: typeof p1) => {
    let n = N;
    let from = src;
    let passes = 0;
    while (n > 1 || passes === 0) {
      const groups = Math.ceil(n / RED_SPAN);
      const to = from === p1 ? p2 : p1;
      client.launch(kernel, [groups], [from, to], new Uint32Array([n]));
      from = to;
      n = groups;
      passes++;
    }
    return { result: from, passes };
  };
  let t0 = performance.now();
  const ru = sum(sumU32, hInts);
  const gotU = u32(await client.read(ru.result))[0]!;
  const rf = sum(sumF32, hFloats);
  const gotF = f32(await client.read(rf.result))[0]!;
  console.log(`  u32 and f32 sums, ${ru.passes} passes each, two reads: ${fmtMs(since(t0))} (first run compiles)`);
  let [wantU, wantF] = [0, 0];
  for (let i = 0; i < N; i++) {
    wantU += ints[i]!;
    wantF += floats[i]!;
  }
  check("sum u32", gotU === wantU, `got ${gotU}, want ${wantU} (exact)`);
  const rel = Math.abs(gotF - wantF) / Math.abs(wantF);
  check("sum f32 (float64 ref)", rel <= 1e-5, `got ${gotF}, want ${wantF.toFixed(3)}, rel err ${rel.toExponential(2)}`);

  const reps = 20;
  t0 = performance.now();
  let last = rf.result;
  for (let i = 0; i < reps; i++) last = sum(sumF32, hFloats).result;
  await client.sync();
  const per = since(t0) / reps;
  console.log(
    `  f32 sum × ${reps} + one sync: ${fmtMs(per)} per sum (includes the amortised sync wait), ` +
      `${(4 * N / per / 1e6).toFixed(2)} GB/s effective`,
  );
  const again = f32(await client.read(last))[0]!;
  check("sum f32 repeated, same result", Object.is(again, gotF), `last of ${reps} sums: ${again}`);
  return [hInts, hFloats, p1, p2];
}

async function matrixMultiply(client: ComputeClient): Promise<Handle[]> {
  const [m, n, k] = [MM, MM, MM];
  section(`Tiled matmul ${m}×${k} · ${k}×${n} (f32, ${TILE}×${TILE} tiles in workgroup memory)`);
  announce(
    `Multiplies two ${m}×${k} matrices 11 times (the first checked against a float64 CPU reference, 10 timed)`,
    TAKES.matmul,
  );
  const r = rng(3);
  const a = Float32Array.from({ length: m * k }, () => r() * 2 - 1);
  const b = Float32Array.from({ length: k * n }, () => r() * 2 - 1);
  const [ha, hb, hc] = [client.create(a), client.create(b), client.empty(m * n * 4)];
  const dims = new Uint32Array([m, n, k]);
  const grid = [Math.ceil(n / TILE), Math.ceil(m / TILE)];
  let t0 = performance.now();
  client.launch(matmul, grid, [ha, hb, hc], dims);
  const got = f32(await client.read(hc));
  console.log(`  first launch + read: ${fmtMs(since(t0))} (includes compilation)`);

  t0 = performance.now();
  const want = new Float64Array(m * n);
  const absSum = new Float64Array(m * n); // Σ|a·b|, bounds the rounding error
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const av = a[i * k + p]!;
      const row = i * n;
      const brow = p * n;
      for (let j = 0; j < n; j++) {
        const prod = av * b[brow + j]!;
        want[row + j] = want[row + j]! + prod;
        absSum[row + j] = absSum[row + j]! + Math.abs(prod);
      }
    }
  }
  const cpuMs = since(t0);
  let [worst, worstAbs] = [0, 0];
  for (let i = 0; i < m * n; i++) {
    const err = Math.abs(got[i]! - want[i]!);
    worstAbs = Math.max(worstAbs, err);
    worst = Math.max(worst, err / absSum[i]!);
  }
  console.log(`  CPU reference (float64): ${fmtMs(cpuMs)}, ${(2 * m * n * k / cpuMs / 1e6).toFixed(2)} GFLOP/s`);
  // Sequential f32 accumulation over k terms errs by at most ~k·u·Σ|a·b|; real errors are far smaller.
  const detail = `max |err| ${worstAbs.toExponential(2)}, max |err|/Σ|a·b| ${worst.toExponential(2)} (tol 1e-5)`;
  check("matmul vs float64 reference", worst <= 1e-5, detail);

  const reps = 10;
  t0 = performance.now();
  for (let i = 0; i < reps; i++) client.launch(matmul, grid, [ha, hb, hc], dims);
  await client.sync();
  const per = since(t0) / reps;
  console.log(
    `  matmul × ${reps} + one sync: ${fmtMs(per)} per launch (includes the amortised sync wait), ` +
      `${(2 * m * n * k / per / 1e6).toFixed(2)} GFLOP/s`,
  );
  const again = f32(await client.read(hc));
  const diff = again.reduce((bad, v, i) => bad + (v === got[i] ? 0 : 1), 0);
  check("matmul repeated, bit-identical", diff === 0, `${diff} of ${m * n} elements differ from the first launch`);
  return [ha, hb, hc];
}

const tStart = performance.now();
const client = await createClient();
console.log(`@denogpu/runtime demo — client ready in ${fmtMs(since(tStart))}`);
announce("Three stages follow, each checked against a CPU reference, then a memory report", TAKES.demo);
const timings: [string, number][] = [];
const live: Handle[] = [];
try {
  printAdapter(client);
  const stages = [["elementwise", elementwise], ["reduction", reduction], ["matmul", matrixMultiply]] as const;
  for (const [name, stage] of stages) {
    const t0 = performance.now();
    live.push(...await stage(client));
    timings.push([name, since(t0)]);
  }
  section("Memory");
  console.log(`  with ${live.length} handles live:    ${formatMemoryUsage(client.memoryUsage())}`);
  console.log(formatMemoryReport(client.memoryReport()).replace(/^/gm, "  "));
  for (const h of live.splice(0)) h.release();
  const after = client.memoryUsage();
  console.log(`  after release():          ${formatMemoryUsage(after)}`);
  check("release() frees every allocation", after.numberAllocs === 0 && after.bytesInUse === 0, "0 allocations, 0 B");
  client.memoryCleanup();
  console.log(`  after memoryCleanup():    ${formatMemoryUsage(client.memoryUsage())}`);
} catch (e) {
  failures++;
  console.log(`  FAIL  unexpected error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
} finally {
  client.destroy();
}

section("Summary");
for (const [name, t] of timings) console.log(`  ${name.padEnd(12)} ${fmtMs(t).padStart(10)}`);
console.log(`  ${"total".padEnd(12)} ${fmtMs(since(tStart)).padStart(10)}`);
console.log(failures === 0 ? "\nAll checks passed." : `\n${failures} check(s) FAILED.`);
if (failures > 0) Deno.exit(1);
