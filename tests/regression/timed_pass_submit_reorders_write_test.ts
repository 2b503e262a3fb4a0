/**
 * Regression: while a profile is open, every dispatch gets its own
 * timestamped pass, and when the query set is full, opening the next pass
 * submits the stream first. That submit came after the dispatch had marked
 * its pages used by the batch being encoded (and taken its cross-stream
 * pins), so the dispatch landed in the next batch while its pages named the
 * submitted one: a write issued next, on the same or another stream, found
 * no unsubmitted work on the page and went to the queue ahead of the
 * dispatch, which then read the new bytes (x + 1 came back instead of the
 * written values).
 */

import assert from "node:assert/strict";
import { addConstKernel, incKernel, macrotask, readU32, withClient } from "../_gpu.ts";

/** Timestamped passes that fill one query set (512 queries, 2 per pass). */
const PASSES_PER_SET = 256;

for (const held of [false, true]) {
  Deno.test(`a write after a ${held ? "held " : ""}launch that opens a profile's next query set runs after it`, async () => {
    await withClient(async (client) => {
      const x = client.create(new Uint32Array([1, 2, 3, 4]));
      const y = client.create(new Uint32Array(4));
      client.launch(incKernel, [1], [y]); // compile inc first
      await client.sync();
      const token = await client.startProfile();
      for (let i = 0; i < PASSES_PER_SET - (held ? 1 : 0); i++) client.launch(incKernel, [1], [y]);
      if (held) client.launch(addConstKernel(81), [1], [y]); // a new pipeline: the stream holds what follows
      client.launch(incKernel, [1], [x]); // its pass is the first of the next query set
      if (held) await macrotask(); // the hold is released
      client.write(x, new Uint32Array([10, 20, 30, 40])); // must not overtake the launch
      await client.endProfile(token);
      assert.deepEqual([...await readU32(client, x)], [10, 20, 30, 40]);
      const n = PASSES_PER_SET + 1 + (held ? 80 : 0);
      assert.deepEqual([...await readU32(client, y)], [n, n, n, n]);
    }, { tasksMax: 1000 });
  });
}
