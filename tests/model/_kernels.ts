/**
 * The kernels a model run launches besides those of tests/_gpu.ts (`incKernel`,
 * `affineKernel`, and `addConstKernel`, whose every constant is a new pipeline
 * compiled on first launch): each one's effect is easy to model on the CPU
 * (wrapping u32 math; the models are in _launches.ts), plus kernels that do
 * not compile.
 */

import { defineKernel } from "../../mod.ts";
import { defineLoopKernel, type LoopKernel } from "../_loop_budget.ts";
import type { Kernel } from "../../mod.ts";

/** out[i] = a[i] ^ b[i] for i < n; info = [n]. */
export const xorKernel: Kernel = defineKernel({
  name: "model-xor",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < n) { out[g.x] = a[g.x] ^ b[g.x]; }
}`,
});

/** dst[0] = src[0] + ... + src[n - 1] (one invocation); info = [n]. */
export const sumKernel: LoopKernel = defineLoopKernel({
  name: "model-sum",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> n: u32;
@compute @workgroup_size(1) fn main() {
  var s = 0u;
  for (var i = 0u; i < n; i++) { s += src[i]; }
  dst[0] = s;
}`,
}, ({ info }) => info[0]!);

/**
 * x[i] = v + 3 i for i < n, where i is the linear index of a 3-D dispatch of
 * 8×8×1 workgroups; info = [n, v].
 */
export const fill3dKernel: Kernel = defineKernel({
  name: "model-fill3d",
  wgsl: `
struct Info { n: u32, v: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read> info: Info;
@compute @workgroup_size(8, 8, 1) fn main(
  @builtin(global_invocation_id) g: vec3u,
  @builtin(num_workgroups) nw: vec3u,
) {
  let i = g.x + (g.y + g.z * nw.y * 8u) * nw.x * 8u;
  if (i < info.n) { x[i] = info.v + 3u * i; }
}`,
});

/** A kernel that does not compile (an unknown identifier). */
export function brokenKernel(tag: number): Kernel {
  return defineKernel({
    name: `model-broken-${tag}`,
    wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = no_such_value_${tag}; }
}`,
  });
}
