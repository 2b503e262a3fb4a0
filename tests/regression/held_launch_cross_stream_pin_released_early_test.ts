/**
 * Regression: a launch that binds another stream's memory pins it until the
 * submission that runs it has completed. A launch held behind a new kernel's
 * first launch took its pin at once, into the stream's pending pins; when the
 * held work was released and submitted in the middle (a held write before it,
 * or `tasksMax` reached), that submit handed every pending pin, the held
 * launch's too, to a submission that did not run it. A completion wait on
 * any stream then dropped the pin while the launch was still unsubmitted, so
 * the memory, released by its handle meanwhile, was freed and its page
 * destroyed by `memoryCleanup`: the launch then bound a destroyed buffer and
 * the stream's next sync rejected with `DeviceValidationError` although every
 * call was valid.
 */

import assert from "node:assert/strict";
import type { ClientOptions } from "../../mod.ts";
import { addConstKernel, incKernel, macrotask, readU32, withClient } from "../_gpu.ts";

const cases: [string, ClientOptions, boolean, number][] = [
  ["a held write submits before it", {}, true, 71],
  ["tasksMax submits before it", { tasksMax: 2 }, false, 72],
];

for (const [label, options, heldWrite, k] of cases) {
  Deno.test(`a held launch keeps another stream's released memory until it has run (${label})`, async () => {
    await withClient(async (client) => {
      const other = client.onStream(1);
      const x = client.create(new Uint32Array([1, 2, 3, 4])); // owned by stream 0
      const y = other.create(new Uint32Array(4));
      const z = other.create(new Uint32Array(4));
      other.launch(incKernel, [1], [y]); // compile inc first
      await client.sync();
      await other.sync();

      other.launch(addConstKernel(k), [1], [y]); // a new pipeline: stream 1 holds what follows
      if (heldWrite) other.write(z, new Uint32Array([5, 6, 7, 8])); // held: its release submits the launch before it
      else other.launch(incKernel, [1], [z]); // held: the second dispatch fills the batch
      other.launch(incKernel, [1], [x]); // held, binds stream 0's memory: pinned
      x.release(); // the pin keeps x alive until the launch has run
      await macrotask(); // the hold is released; the last launch stays unsubmitted
      await client.sync(); // a completion wait on another stream
      client.memoryCleanup(); // frees stream 0's pages that nothing uses any more
      await other.sync(); // must not reject
      assert.deepEqual([...await readU32(other, y)], [1 + k, 1 + k, 1 + k, 1 + k]);
      assert.deepEqual([...await readU32(other, z)], heldWrite ? [5, 6, 7, 8] : [1, 1, 1, 1]);
    }, options);
  });
}
