/**
 * Regression: a launch held behind a new kernel's first launch does not keep
 * the memory it binds alive when that memory belongs to its own stream; it
 * relies on the stream not being idle (buffers freed meanwhile are destroyed
 * only once the stream has no unsubmitted work). But `Stream.#release` clears
 * the hold before it encodes the held work, so when the release submits in
 * the middle (a held write, or `tasksMax` reached), `storage.flush()` finds
 * the stream idle and destroys buffers freed during the hold, although held
 * launches still to be encoded bind them: the next submit fails validation
 * ("Buffer with 'stream 0 main pool 0 direct buffer 2 (32 B)' label has been
 * destroyed") and its whole batch is lost.
 *
 * A buffer is freed during the hold when its last handle is released and an
 * allocation makes a pool reclaim free buffers (here a direct pool with
 * `reclaimAt: 1`), or by the exclusive pools' periodic cleanup.
 *
 * Found by the model test (tests/model, seed 3035 at 3000 steps: direct
 * pools with reclaimAt 4096, tasksMax 1).
 */

import assert from "node:assert/strict";
import type { ClientOptions } from "../../mod.ts";
import { addConstKernel, incKernel, macrotask, readU32, withClient } from "../_gpu.ts";

const cases: [string, ClientOptions, boolean, number][] = [
  ["a held write submits mid-release", { memory: { pools: [{ kind: "direct", reclaimAt: 1 }] } }, true, 60],
  ["tasksMax 1 submits mid-release", { tasksMax: 1, memory: { pools: [{ kind: "direct", reclaimAt: 1 }] } }, false, 61],
];

for (const [label, options, heldWrite, k] of cases) {
  Deno.test(`a held launch whose handle was released keeps its memory until it runs (${label})`, async () => {
    await withClient(async (client) => {
      const y = client.create(new Uint32Array(4));
      const z = client.create(new Uint32Array(4));
      const x = client.create(new Uint32Array([1, 2, 3, 4]));
      const out = client.create(new Uint32Array(4));
      client.launch(incKernel, [1], [y]); // compile inc first
      await client.sync();

      client.launch(addConstKernel(k), [1], [y]); // a new pipeline: the stream holds what follows
      if (heldWrite) client.write(z, new Uint32Array([7, 7, 7, 7])); // held: the release submits here
      client.launch(incKernel, [1], [x]); // held, binds x
      x.release(); // x's buffer is free once the held launch has run
      const fresh = client.empty(64); // an allocation: the direct pool reclaims free buffers (x's)
      await macrotask(); // the hold is released
      client.launch(incKernel, [1], [out]);
      await client.sync(); // must not reject
      assert.deepEqual([...await readU32(client, out)], [1, 1, 1, 1]);
      assert.deepEqual([...await readU32(client, y)], [1 + k, 1 + k, 1 + k, 1 + k]);
      fresh.release();
    }, options);
  });
}
