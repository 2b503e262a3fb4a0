/**
 * Contract under test (cubecl-semantics.md §5): a captured graph pins every
 * buffer it recorded until it is destroyed. A handle released after the
 * capture must not let its slice go to another handle while replays still
 * write into it or read counts from it; `memoryUsage()` counts that memory as
 * in use until `destroy()`, and `destroy()` lets it go only after any replay
 * already queued.
 *
 * Before the fix, the replay wrote into a new, unrelated handle that reused
 * the released slice, with no error anywhere.
 */

import assert from "node:assert/strict";
import type { Handle } from "../../mod.ts";
import type { ComputeClient, Transport } from "../../mod.ts";
import { incKernel, plusOneKernel, readF32, readU32 } from "../_gpu.ts";
import { clientTest } from "../_clients.ts";

const SENTINEL = [999, 999, 999, 999];

/** Creates `count` handles of [999; 4]: with a released 16-byte slice free, one of them would reuse it. */
function sentinelsOver(client: ComputeClient<Transport>, count = 8): Handle[] {
  return Array.from({ length: count }, () => client.create(new Float32Array(SENTINEL)));
}

clientTest(
  "a graph keeps the memory of a handle released after the capture: replays never write into a new handle",
  async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const graph = await client.capture(() => client.launch(plusOneKernel, [1], [input, output]));
    const kept = output.clone(); // to read what the replay wrote
    output.release();
    kept.release(); // the graph is now the only holder of the output's memory
    const sentinels = sentinelsOver(client);
    graph.replay();
    graph.replay();
    for (const s of sentinels) assert.deepEqual([...await readF32(client, s)], SENTINEL);
    graph.destroy();
    for (const s of sentinels) s.release();
    input.release();
  },
);

clientTest("a replay still writes into the memory of a released handle that a clone keeps", async (client) => {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const graph = await client.capture(() => client.launch(plusOneKernel, [1], [input, output]));
  const kept = output.clone();
  output.release();
  const sentinels = sentinelsOver(client);
  client.write(input, new Float32Array([10, 20, 30, 40]));
  graph.replay();
  assert.deepEqual([...await readF32(client, kept)], [11, 21, 31, 41]);
  for (const s of sentinels) assert.deepEqual([...await readF32(client, s)], SENTINEL);
  graph.destroy();
});

clientTest("memoryUsage() counts a graph's pinned memory as in use until the graph is destroyed", async (client) => {
  const input = client.create(new Float32Array(64));
  const output = client.empty(256);
  const graph = await client.capture(() => client.launch(plusOneKernel, [1], [input, output]));
  const before = await client.memoryUsage();
  input.release();
  output.release();
  const pinned = await client.memoryUsage();
  assert.equal(pinned.numberAllocs, before.numberAllocs);
  assert.equal(pinned.bytesInUse, before.bytesInUse);
  graph.destroy();
  const after = await client.memoryUsage();
  assert.equal(after.numberAllocs, before.numberAllocs - 2);
  assert.equal(after.bytesInUse, before.bytesInUse - 256 - 256);
});

clientTest(
  "a graph keeps its indirect count after the count handle is released: replays read the recorded counts",
  async (client) => {
    const x = client.create(new Uint32Array(64));
    const counts = client.create(new Uint32Array([1, 1, 1]));
    const graph = await client.capture(() => client.launch(incKernel, counts, [x]));
    counts.release();
    // Would reuse the count's slice: a zero count would make every replay dispatch nothing.
    const zeros = Array.from({ length: 8 }, () => client.create(new Uint32Array([0, 0, 0])));
    graph.replay();
    graph.replay();
    const got = await readU32(client, x);
    assert.deepEqual([...got], new Array(64).fill(3)); // warm-up + 2 replays, 64 invocations each
    for (const z of zeros) assert.deepEqual([...await readU32(client, z)], [0, 0, 0]);
    graph.destroy();
  },
);

clientTest(
  "destroy() lets a graph's memory go only after a replay already queued: a new handle keeps its bytes",
  async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const graph = await client.capture(() => client.launch(plusOneKernel, [1], [input, output]));
    output.release();
    graph.replay(); // queued, not submitted
    graph.destroy(); // the slice is free from here on, behind the replay in queue order
    const sentinels = sentinelsOver(client);
    for (const s of sentinels) assert.deepEqual([...await readF32(client, s)], SENTINEL);
  },
);
