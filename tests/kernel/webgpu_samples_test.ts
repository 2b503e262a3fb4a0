/**
 * Contract under test: standard WGSL compute kernels, as public WebGPU
 * samples write them, run without edits. Their buffers (read-only storage,
 * uniforms, read-write storage) bind in `(group, binding)` order, one launch
 * argument each, and the runtime rewrites their access modes in the source it
 * compiles so pooled buffers sharing a page can bind together.
 */

import assert from "node:assert/strict";
import { defineKernel, type Handle } from "../../mod.ts";
import { readF32, readU32, rng, withClient } from "../_gpu.ts";

/**
 * `sample/gameOfLife/compute.wgsl` of webgpu/webgpu-samples
 * (https://github.com/webgpu/webgpu-samples), BSD-3-Clause licence,
 * Copyright 2019 WebGPU Samples authors. Verbatim, as a newcomer ports it.
 */
const GAME_OF_LIFE = `@binding(0) @group(0) var<storage, read> size: vec2u;
@binding(1) @group(0) var<storage, read> current: array<u32>;
@binding(2) @group(0) var<storage, read_write> next: array<u32>;

override blockSize = 8;

fn getIndex(x: u32, y: u32) -> u32 {
  let h = size.y;
  let w = size.x;

  return (y % h) * w + (x % w);
}

fn getCell(x: u32, y: u32) -> u32 {
  return current[getIndex(x, y)];
}

fn countNeighbors(x: u32, y: u32) -> u32 {
  return getCell(x - 1, y - 1) + getCell(x, y - 1) + getCell(x + 1, y - 1) + 
         getCell(x - 1, y) +                         getCell(x + 1, y) + 
         getCell(x - 1, y + 1) + getCell(x, y + 1) + getCell(x + 1, y + 1);
}

@compute @workgroup_size(blockSize, blockSize)
fn main(@builtin(global_invocation_id) grid: vec3u) {
  let x = grid.x;
  let y = grid.y;
  let n = countNeighbors(x, y);
  next[getIndex(x, y)] = select(u32(n == 3u), u32(n == 2u || n == 3u), getCell(x, y) == 1u);
} 
`;

/** One generation of Life on a w × h torus: the shader's arithmetic, in u32. */
function lifeStep(cells: Uint32Array, w: number, h: number): Uint32Array {
  const at = (x: number, y: number) => cells[((y >>> 0) % h) * w + ((x >>> 0) % w)]!;
  const out = new Uint32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let n = 0;
      for (const [dx, dy] of [[-1, -1], [0, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [0, 1], [1, 1]] as const) {
        n += at(x + dx, y + dy);
      }
      out[y * w + x] = at(x, y) === 1 ? Number(n === 2 || n === 3) : Number(n === 3);
    }
  }
  return out;
}

Deno.test("the verbatim webgpu-samples Game of Life kernel runs several generations and matches the CPU", async () => {
  const w = 32, h = 32, generations = 5;
  const random = rng(16);
  const start = Uint32Array.from({ length: w * h }, () => (random() < 0.3 ? 1 : 0));
  let expected: Uint32Array = start;
  for (let g = 0; g < generations; g++) expected = lifeStep(expected, w, h);

  for (const block of [8, 4]) {
    // The sample's default, then the override set through `constants`.
    const constants: Record<string, number> = block === 8 ? {} : { blockSize: block };
    const life = defineKernel({ name: "game-of-life", wgsl: GAME_OF_LIFE, constants });
    assert.deepEqual(life.layout.workgroupSize, [block, block, 1]);
    assert.deepEqual(life.layout.bindingNames, ["size", "current", "next"]);
    await withClient(async (client) => {
      const size = client.create(new Uint32Array([w, h]));
      // Bytes (`Handle`): the two swap, and `empty` gives bytes.
      let current: Handle = client.create(start);
      let next: Handle = client.empty(w * h * 4);
      for (let g = 0; g < generations; g++) {
        client.launch(life, [w / block, h / block], [size, current, next]);
        [current, next] = [next, current];
      }
      assert.deepEqual([...await readU32(client, current)], [...expected], `blockSize ${block}`);
    });
  }
});

/**
 * A flocking step written for this test, declared the way webgpu-samples'
 * computeBoids declares its update kernel: a uniform params struct at binding
 * 0, the particles read-only at binding 1 and written at binding 2.
 */
const FLOCK = `
struct Particle {
  pos : vec2f,
  vel : vec2f,
}
struct SimParams {
  deltaT : f32,
  cohesionDistance : f32,
  separationDistance : f32,
  alignDistance : f32,
  cohesionScale : f32,
  separationScale : f32,
  alignScale : f32,
}
struct Particles {
  particles : array<Particle>,
}
@binding(0) @group(0) var<uniform> params : SimParams;
@binding(1) @group(0) var<storage, read> particlesIn : Particles;
@binding(2) @group(0) var<storage, read_write> particlesOut : Particles;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id : vec3u) {
  let i = id.x;
  let n = arrayLength(&particlesIn.particles);
  if (i >= n) {
    return;
  }
  let me = particlesIn.particles[i];
  var center = vec2f(0.0);
  var centerCount = 0u;
  var away = vec2f(0.0);
  var heading = vec2f(0.0);
  var headingCount = 0u;
  for (var j = 0u; j < n; j++) {
    if (j == i) {
      continue;
    }
    let other = particlesIn.particles[j];
    let d = distance(other.pos, me.pos);
    if (d < params.cohesionDistance) {
      center += other.pos;
      centerCount++;
    }
    if (d < params.separationDistance) {
      away -= other.pos - me.pos;
    }
    if (d < params.alignDistance) {
      heading += other.vel;
      headingCount++;
    }
  }
  var vel = me.vel;
  if (centerCount > 0u) {
    vel += (center / f32(centerCount) - me.pos) * params.cohesionScale;
  }
  vel += away * params.separationScale;
  if (headingCount > 0u) {
    vel += heading / f32(headingCount) * params.alignScale;
  }
  let speed = length(vel);
  if (speed > 0.1) {
    vel *= 0.1 / speed;
  }
  var pos = me.pos + vel * params.deltaT;
  if (pos.x < -1.0) { pos.x += 2.0; }
  if (pos.x > 1.0) { pos.x -= 2.0; }
  if (pos.y < -1.0) { pos.y += 2.0; }
  if (pos.y > 1.0) { pos.y -= 2.0; }
  particlesOut.particles[i] = Particle(pos, vel);
}`;

const PARAMS = {
  deltaT: 0.04,
  cohesionDistance: 0.1,
  separationDistance: 0.025,
  alignDistance: 0.025,
  cohesionScale: 0.02,
  separationScale: 0.05,
  alignScale: 0.005,
};

/** The flocking step on the CPU: particles are [x, y, vx, vy] per particle. */
function flockStep(particles: Float32Array, p: typeof PARAMS): Float32Array {
  const n = particles.length / 4;
  const out = new Float32Array(particles.length);
  for (let i = 0; i < n; i++) {
    const [x, y, vx, vy] = particles.subarray(4 * i, 4 * i + 4);
    let cx = 0, cy = 0, cn = 0, ax = 0, ay = 0, hx = 0, hy = 0, hn = 0;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const [ox, oy, ovx, ovy] = particles.subarray(4 * j, 4 * j + 4);
      const d = Math.hypot(ox! - x!, oy! - y!);
      if (d < p.cohesionDistance) [cx, cy, cn] = [cx + ox!, cy + oy!, cn + 1];
      if (d < p.separationDistance) [ax, ay] = [ax - (ox! - x!), ay - (oy! - y!)];
      if (d < p.alignDistance) [hx, hy, hn] = [hx + ovx!, hy + ovy!, hn + 1];
    }
    let [wx, wy] = [vx!, vy!];
    if (cn > 0) [wx, wy] = [wx + (cx / cn - x!) * p.cohesionScale, wy + (cy / cn - y!) * p.cohesionScale];
    [wx, wy] = [wx + ax * p.separationScale, wy + ay * p.separationScale];
    if (hn > 0) [wx, wy] = [wx + (hx / hn) * p.alignScale, wy + (hy / hn) * p.alignScale];
    const speed = Math.hypot(wx, wy);
    if (speed > 0.1) [wx, wy] = [wx * 0.1 / speed, wy * 0.1 / speed];
    const wrap = (v: number) => (v < -1 ? v + 2 : v > 1 ? v - 2 : v);
    out.set([wrap(x! + wx * p.deltaT), wrap(y! + wy * p.deltaT), wx, wy], 4 * i);
  }
  return out;
}

Deno.test("a boids-style kernel with a var<uniform> params struct and read-only particles matches the CPU", async () => {
  const n = 128;
  const random = rng(7);
  // Particles packed close enough together that every rule fires for some of them.
  const particles = Float32Array.from(
    { length: 4 * n },
    (_, k) => (k % 4 < 2 ? random() * 0.4 - 0.2 : random() * 0.02 - 0.01),
  );
  const flock = defineKernel({ name: "flock", wgsl: FLOCK });
  assert.deepEqual(flock.layout.bindingNames, ["params", "particlesIn", "particlesOut"]);
  await withClient(async (client) => {
    const params = client.create(new Float32Array(Object.values(PARAMS)));
    const a = client.create(particles);
    const b = client.empty(particles.byteLength);
    client.launch(flock, [n / 64], [params, a, b]);
    client.launch(flock, [n / 64], [params, b, a]);
    const expected = flockStep(flockStep(particles, PARAMS), PARAMS);
    const got = await readF32(client, a);
    for (let k = 0; k < expected.length; k++) {
      assert.ok(
        Math.abs(got[k]! - expected[k]!) < 1e-5,
        `particle ${k >> 2} field ${k % 4}: ${got[k]} vs ${expected[k]}`,
      );
    }
  });
});
