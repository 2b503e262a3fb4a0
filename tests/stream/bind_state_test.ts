/**
 * Contract under test: a stream does not set a bind group that its open pass
 * already has bound under the same pipeline (the call would change nothing),
 * and that saving never leaves a dispatch running on the wrong buffers: a
 * different bind group, a pipeline change, a bind group with info words, a
 * new pass or a submit each bind again.
 */

import assert from "node:assert/strict";
import { affineKernel, incKernel, readU32, rng, withClient } from "../_gpu.ts";

/** Counts `setBindGroup` calls on every compute pass until `restore()`. */
function countBinds(): { count: () => number; restore: () => void } {
  const proto = GPUComputePassEncoder.prototype;
  const original = proto.setBindGroup;
  let n = 0;
  proto.setBindGroup = function (this: GPUComputePassEncoder, ...args: Parameters<typeof original>) {
    n++;
    return original.apply(this, args);
  } as typeof original;
  return { count: () => n, restore: () => (proto.setBindGroup = original) };
}

Deno.test("replaying a one-dispatch graph 100 times binds its group once and applies every replay", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const graph = await client.capture(() => client.launch(incKernel, [1], [x]));
    client.write(x, new Uint32Array(64)); // the capture ran the launch once as its warm-up
    await client.sync();
    const binds = countBinds();
    try {
      for (let i = 0; i < 100; i++) graph.replay();
    } finally {
      binds.restore();
    }
    assert.equal(binds.count(), 1, "one setBindGroup for 100 dispatches on the same bindings");
    assert.deepEqual([...await readU32(client, x)], new Array(64).fill(100));
    graph.destroy();
  });
});

Deno.test("launches, replays and info launches interleaved at random bind the right buffers every time", async () => {
  await withClient(async (client) => {
    const n = 64;
    const x = client.create(new Uint32Array(n));
    const y = client.create(new Uint32Array(n));
    const z = client.create(new Uint32Array(n));
    const gx = await client.capture(() => client.launch(incKernel, [1], [x]));
    const gy = await client.capture(() => {
      client.launch(incKernel, [1], [y]);
      client.launch(incKernel, [1], [y]); // the same bindings twice within one graph
    });
    for (const h of [x, y]) client.write(h, new Uint32Array(n)); // undo the captures' warm-up runs
    const model = { x: 0, y: 0, z: 0 };
    const random = rng(20261130);
    for (let step = 0; step < 600; step++) {
      const op = Math.floor(random() * 7);
      if (op === 0) (gx.replay(), model.x += 1);
      else if (op === 1) (gy.replay(), model.y += 2);
      else if (op === 2) (client.launch(incKernel, [1], [x]), model.x += 1);
      else if (op === 3) (client.launch(incKernel, [1], [y]), model.y += 1);
      else if (op === 4) {
        (client.launch(affineKernel, [1], [x, z], new Uint32Array([n, 3, 1])), model.z = 3 * model.x + 1);
      } else if (op === 5) (client.launch(incKernel, [1], [z]), model.z += 1);
      else if (random() < 0.1) {
        // A read submits and the next dispatch opens a fresh pass.
        assert.deepEqual([...await readU32(client, z)], new Array(n).fill(model.z), `z at step ${step}`);
      }
    }
    assert.deepEqual([...await readU32(client, x)], new Array(n).fill(model.x), "x");
    assert.deepEqual([...await readU32(client, y)], new Array(n).fill(model.y), "y");
    assert.deepEqual([...await readU32(client, z)], new Array(n).fill(model.z), "z");
    gx.destroy();
    gy.destroy();
  });
});
