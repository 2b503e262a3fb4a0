/**
 * Regression: the info arena shares one offset between consecutive launches
 * whose info words are identical. For a `Float32Array` it compared the words
 * as numbers with `Object.is`, which holds for any two NaNs, so a launch whose
 * words differed from the previous one only in a NaN's bits (u32 fields packed
 * into a Float32Array, or NaN-boxed payloads) was bound to the previous
 * launch's words: the kernel read bits the user never gave it.
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { readU32, withClient } from "../_gpu.ts";

/** out[i] = bits of info word i. */
const copyInfo = defineKernel({
  name: "copy-info",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> info: array<u32>;
@compute @workgroup_size(1) fn main() { out[0] = info[0]; out[1] = info[1]; }`,
});

Deno.test("info words that differ only in a NaN's bits each reach their own dispatch", async () => {
  await withClient(async (client) => {
    const warm = client.create(new Uint32Array(2));
    client.launch(copyInfo, [1], [warm], new Uint32Array([1, 2])); // compiled: later launches are not held
    await client.sync();
    const words = [
      [0x7fc00001, 7],
      [0x7fc00002, 7],
      [0x7f800001, 7],
      [0xffc00000, 7],
    ];
    const outs = words.map(() => client.empty(8));
    words.forEach((w, i) => client.launch(copyInfo, [1], [outs[i]!], new Float32Array(new Uint32Array(w).buffer)));
    for (let i = 0; i < words.length; i++) {
      assert.deepEqual([...await readU32(client, outs[i]!)], words[i], `launch ${i}`);
    }
  });
});
