/**
 * The all-reduce on a device: `out[i] = a[i] ⊕ x[i]` for `f32`, `i32` and
 * `u32`, one element per invocation (no loop, so it stays far inside the
 * software adapter's loop limit), dispatched over x and y when the count
 * needs more than one row of workgroups. `mean` divides by the participant
 * count in the last step (integer division truncates, as on the host).
 *
 * @module
 */

import { defineKernel } from "../kernel/define_kernel.ts";
import type { Kernel } from "../contract/kernel.ts";
import type { ReduceOperation } from "../contract/types.ts";

/** Invocations per workgroup of the reduction kernels. */
export const REDUCE_WORKGROUP = 256;

/** The element types a device reduces (f16 reduces on the host). */
export type DeviceReduceDtype = "f32" | "i32" | "u32";

const COMBINE: Readonly<Record<ReduceOperation, string>> = {
  sum: "a[i] + x[i]",
  mean: "a[i] + x[i]",
  max: "max(a[i], x[i])",
  min: "min(a[i], x[i])",
};

const kernels = new Map<string, Kernel>();

/**
 * The kernel of one element type and reduction. Bindings: `a`, `x`, `out`
 * (`out` may be `a`), then the info words `[count, divisor]` (divisor 1 but
 * in the last step of a `mean`).
 *
 * @param dtype Element type.
 * @param op The reduction.
 * @returns The kernel (one per pair, made on first use).
 */
export function reduceKernel(dtype: DeviceReduceDtype, op: ReduceOperation): Kernel {
  const key = `${dtype} ${op}`;
  let k = kernels.get(key);
  if (k === undefined) {
    k = defineKernel({
      name: `denogpu all-reduce ${key}`,
      wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<${dtype}>;
@group(0) @binding(1) var<storage, read_write> x: array<${dtype}>;
@group(0) @binding(2) var<storage, read_write> out: array<${dtype}>;
@group(0) @binding(3) var<storage, read> info: array<u32, 2>;
@compute @workgroup_size(${REDUCE_WORKGROUP}) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let i = g.x + g.y * n.x * ${REDUCE_WORKGROUP}u;
  if (i >= info[0]) { return; }
  var v = ${COMBINE[op]};
  if (info[1] > 1u) { v = v / ${dtype}(info[1]); }
  out[i] = v;
}`,
    });
    kernels.set(key, k);
  }
  return k;
}

/**
 * The snapshot kernel: `out[i] = a[i]` over 32-bit words (bindings `a`,
 * `out`, then the info word `[count]`): the source of a device reduction as
 * the work queued before the call left it.
 */
export const SNAPSHOT_KERNEL: Kernel = defineKernel({
  name: "denogpu all-reduce snapshot",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> info: array<u32, 1>;
@compute @workgroup_size(${REDUCE_WORKGROUP}) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let i = g.x + g.y * n.x * ${REDUCE_WORKGROUP}u;
  if (i < info[0]) { out[i] = a[i]; }
}`,
});

/**
 * Workgroups `[x, y]` covering `count` elements within `maxPerDimension` per axis.
 *
 * @param count Elements.
 * @param maxPerDimension `maxComputeWorkgroupsPerDimension`.
 * @returns The counts.
 */
export function reduceGrid(count: number, maxPerDimension: number): [number, number] {
  const groups = Math.max(1, Math.ceil(count / REDUCE_WORKGROUP));
  const x = Math.min(groups, maxPerDimension);
  return [x, Math.ceil(groups / x)];
}
