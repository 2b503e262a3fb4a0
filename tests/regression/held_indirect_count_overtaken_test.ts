/**
 * Regression: a launch held behind a new kernel's first launch remembers the
 * pages of its bindings and marks them used again when it is finally encoded
 * (`Stream.#release`), but not the page holding its indirect workgroup counts.
 * When the held work is released with a submit in the middle (a held write),
 * the indirect dispatch is encoded into the next, unsubmitted batch while its
 * count page still carries the old epoch, so a later write into the count
 * memory does not submit the stream first: the write reaches the queue before
 * the dispatch, which then runs with the new counts.
 *
 * Visible when the counts live in a page none of the held launches binds
 * (another stream's memory, or any pool with one buffer per allocation).
 *
 * Found by the model test (tests/model, seed 1059 at 3000 steps, direct pools).
 */

import assert from "node:assert/strict";
import type { ClientOptions } from "../../mod.ts";
import { addConstKernel, incKernel, macrotask, readU32, withClient } from "../_gpu.ts";

const layouts: [string, ClientOptions, number][] = [
  ["one buffer per allocation", { memory: { pools: [{ kind: "direct" }] } }, 0],
  ["counts owned by another stream", {}, 1],
];

for (const [label, options, countStream] of layouts) {
  Deno.test(`a write into the counts does not overtake an indirect launch released from a hold (${label})`, async () => {
    await withClient(async (client) => {
      const counts = client.onStream(countStream).create(new Uint32Array([1, 1, 1]));
      const x = client.create(new Uint32Array(4));
      const y = client.create(new Uint32Array(4));
      const z = client.create(new Uint32Array(4));
      client.launch(incKernel, [1], [y]); // compile inc first
      await client.sync();
      await client.onStream(countStream).sync();

      client.launch(addConstKernel(40 + countStream), [1], [y]); // a new pipeline: the stream holds what follows
      client.write(z, new Uint32Array([7, 7, 7, 7])); // held write: the release submits here
      client.launch(incKernel, counts, [x]); // held indirect launch, counts [1, 1, 1]
      await macrotask(); // released: the indirect dispatch is encoded, not yet submitted
      client.write(counts, new Uint32Array([0, 0, 0])); // must land after that dispatch
      assert.deepEqual([...await readU32(client, x)], [1, 1, 1, 1]);
    }, options);
  });
}
