/**
 * Regression: a kernel's id (its pipeline cache key) serialised its
 * pipeline-overridable constants with `String(value)`, which writes -0 as
 * "0". Two kernels of the same source whose only difference is a constant of
 * 0 versus -0 therefore had the same id and shared one compiled pipeline, so
 * the second ran with the first one's constant (for an f32 override the two
 * differ: in their sign bit, in `1 / c`, in `sign(c)`...).
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { readU32, withClient } from "../_gpu.ts";

const WGSL = `
override C: f32;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() {
  out[0] = bitcast<u32>(C);
}`;

/** The bits of `v` as an f32, computed on the CPU. */
function f32Bits(v: number): number {
  return new Uint32Array(new Float32Array([v]).buffer)[0]!;
}

Deno.test("kernels whose only difference is a constant of 0 versus -0 compile to different pipelines", async () => {
  const zero = defineKernel({ name: "bits", wgsl: WGSL, constants: { C: 0 } });
  const negativeZero = defineKernel({ name: "bits", wgsl: WGSL, constants: { C: -0 } });
  assert.notEqual(zero.id, negativeZero.id);
  await withClient(async (client) => {
    const a = client.create(new Uint32Array(1));
    const b = client.create(new Uint32Array(1));
    client.launch(zero, [1], [a]);
    client.launch(negativeZero, [1], [b]);
    assert.deepEqual([...await readU32(client, a)], [f32Bits(0)]);
    assert.deepEqual([...await readU32(client, b)], [f32Bits(-0)]);
  });
});
