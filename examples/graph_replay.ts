/**
 * Graph capture and replay: capture one step of a 1-D heat-diffusion
 * simulation (three kernels) once, then replay it many times, and compare the
 * host time against launching the same kernels, checking that both give the
 * same result as a CPU reference.
 *
 * Run: `deno run --allow-env examples/graph_replay.ts`
 */

import { createClient, defineKernel } from "../mod.ts";

const N = 4096;
const STEPS = 500;
const client = await createClient();
console.log(`adapter: ${client.properties.identity.description}`);

const stencil = defineKernel({
  name: "stencil",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> u: array<f32>;
@group(0) @binding(1) var<storage, read_write> next: array<f32>;
@group(0) @binding(2) var<storage, read> alpha: f32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  let n = arrayLength(&u);
  if (i >= n) { return; }
  let l = u[select(i - 1u, n - 1u, i == 0u)];
  let r = u[select(i + 1u, 0u, i + 1u == n)];
  next[i] = u[i] + alpha * (l - 2.0 * u[i] + r);
}`,
});
const sourceTerm = defineKernel({
  name: "source",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> next: array<f32>;
@compute @workgroup_size(1) fn main() { next[0] = next[0] + 1.0; }`,
});
const copyBack = defineKernel({
  name: "copy-back",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> next: array<f32>;
@group(0) @binding(1) var<storage, read_write> u: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&u)) { u[g.x] = next[g.x]; }
}`,
});

const alpha = new Float32Array([0.25]);
const groups = [N / 64];
const initial = new Float32Array(N);
initial[N / 2] = 100;

function cpuReference(steps: number): Float32Array {
  let u = initial.slice();
  for (let s = 0; s < steps; s++) {
    const next = new Float32Array(N);
    for (let i = 0; i < N; i++) {
      const l = u[(i + N - 1) % N]!;
      const r = u[(i + 1) % N]!;
      next[i] = Math.fround(u[i]! + Math.fround(alpha[0]! * Math.fround(Math.fround(l - Math.fround(2 * u[i]!)) + r)));
    }
    next[0] = Math.fround(next[0]! + 1);
    u = next;
  }
  return u;
}

const u = client.create(initial);
const next = client.empty(N * 4);
const uNext = [u, next];
const nextOnly = [next];
const nextU = [next, u];
function step(): void {
  client.launch(stencil, groups, uNext, alpha);
  client.launch(sourceTerm, [1], nextOnly);
  client.launch(copyBack, groups, nextU);
}

// Warm up: compile and validate the three pipelines, then start from the initial state.
step();
await client.sync();
client.write(u, initial);

// 1. Plain launches.
let t0 = performance.now();
for (let s = 0; s < STEPS; s++) step();
const launchHost = performance.now() - t0;
await client.sync();
const launchTotal = performance.now() - t0;
const viaLaunch = new Float32Array((await client.read(u)).buffer.slice(0));

// 2. Capture one step (the warm-up runs it once, so reset the state afterwards), replay STEPS times.
const graph = await client.capture(step);
client.write(u, initial);
t0 = performance.now();
for (let s = 0; s < STEPS; s++) graph.replay();
const replayHost = performance.now() - t0;
await client.sync();
const replayTotal = performance.now() - t0;
const viaReplay = new Float32Array((await client.read(u)).buffer.slice(0));

const want = cpuReference(STEPS);
const maxErr = (a: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i]!)), 0);
const ok = maxErr(viaLaunch) < 1e-3 && maxErr(viaReplay) < 1e-3 && viaLaunch.every((v, i) => v === viaReplay[i]);

console.log(`${STEPS} steps × 3 kernels (${STEPS * 3} dispatches)`);
console.log(
  `  launch: ${launchHost.toFixed(2)} ms host (${((launchHost / STEPS / 3) * 1000).toFixed(2)} µs/dispatch), ${
    launchTotal.toFixed(1)
  } ms with the device`,
);
console.log(
  `  replay: ${replayHost.toFixed(2)} ms host (${((replayHost / STEPS / 3) * 1000).toFixed(2)} µs/dispatch), ${
    replayTotal.toFixed(1)
  } ms with the device`,
);
console.log(
  `  max |error| vs CPU: launch ${maxErr(viaLaunch).toExponential(2)}, replay ${maxErr(viaReplay).toExponential(2)}`,
);
console.log(ok ? "PASS: launch and replay agree with the CPU reference" : "FAIL");

graph.destroy();
client.destroy();
if (!ok) Deno.exit(1);
