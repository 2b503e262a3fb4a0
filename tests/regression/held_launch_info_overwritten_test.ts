/**
 * Regression: while a new kernel's pipeline is being validated, a stream holds
 * back the launches and writes issued meanwhile, with each launch's info words
 * already placed in the stream's info arena. When the held work is released,
 * a held write submits in the middle of it (`Stream.#release`); that
 * submit uploads the arena and resets it, but the held launches encoded after
 * it keep their old arena offsets. The next launches reuse those offsets, so
 * the held launches run with another launch's info words.
 *
 * Found by the model test (tests/model, seed 11).
 */

import assert from "node:assert/strict";
import { addConstKernel, affineKernel, macrotask, readU32, withClient } from "../_gpu.ts";

Deno.test("a launch held behind a new kernel and a write keeps its own info words", async () => {
  await withClient(async (client) => {
    const src = client.create(new Uint32Array([1, 2, 3, 4]));
    const dst = client.create(new Uint32Array(4));
    const other = client.create(new Uint32Array(4));
    const x = client.create(new Uint32Array(4));
    client.launch(affineKernel, [1], [src, dst], new Uint32Array([4, 1, 0])); // compile affine first
    await client.sync();

    client.launch(addConstKernel(7), [1], [x]); // a new pipeline: the stream holds what follows
    client.write(other, new Uint32Array([9, 9, 9, 9])); // held write
    client.launch(affineKernel, [1], [src, dst], new Uint32Array([4, 10, 5])); // held: dst = 10 src + 5
    await macrotask(); // the validation is known: the held work is released (submitting at the write)
    client.launch(affineKernel, [1], [src, other], new Uint32Array([2, 100, 1])); // info words at a reused offset
    assert.deepEqual([...await readU32(client, dst)], [15, 25, 35, 45]);
    assert.deepEqual([...await readU32(client, other)], [101, 201, 9, 9]);
    assert.deepEqual([...await readU32(client, x)], [7, 7, 7, 7]);
  });
});
