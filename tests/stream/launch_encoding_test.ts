/**
 * What the launch path encodes: a bind group bound already under the same
 * pipeline with the same dynamic offset is not set again (identical
 * consecutive info words share one arena offset), and an indirect launch
 * whose count comes from `createCount` dispatches from the count in place,
 * and one whose count shares a page with its bindings copies it by a
 * dispatch in the same pass, not by an encoder copy that would end it, and
 * only when the stream's count slots do not hold it already.
 */

import assert from "node:assert/strict";
import type { ComputeClient } from "../../mod.ts";
import { affineKernel, incKernel, readU32, withClient } from "../_gpu.ts";

/** Counts the WebGPU calls `fn` makes on passes and encoders. */
function countCalls(
  fn: () => void,
): { setBindGroup: number; beginComputePass: number; copies: number; dispatches: number } {
  const pass = GPUComputePassEncoder.prototype;
  const encoder = GPUCommandEncoder.prototype;
  const setBindGroup = pass.setBindGroup;
  const dispatch = pass.dispatchWorkgroups;
  const begin = encoder.beginComputePass;
  const copy = encoder.copyBufferToBuffer;
  const n = { setBindGroup: 0, beginComputePass: 0, copies: 0, dispatches: 0 };
  pass.dispatchWorkgroups = function (this: GPUComputePassEncoder, ...args: unknown[]) {
    n.dispatches++;
    (dispatch as (...a: unknown[]) => void).apply(this, args);
    return undefined;
  } as typeof dispatch;
  pass.setBindGroup = function (this: GPUComputePassEncoder, ...args: unknown[]) {
    n.setBindGroup++;
    (setBindGroup as (...a: unknown[]) => void).apply(this, args);
    return undefined;
  } as typeof setBindGroup;
  encoder.beginComputePass = function (this: GPUCommandEncoder, ...args: unknown[]) {
    n.beginComputePass++;
    return (begin as (...a: unknown[]) => GPUComputePassEncoder).apply(this, args);
  };
  encoder.copyBufferToBuffer = function (this: GPUCommandEncoder, ...args: unknown[]) {
    n.copies++;
    (copy as (...a: unknown[]) => void).apply(this, args);
    return undefined;
  } as typeof copy;
  try {
    fn();
  } finally {
    pass.setBindGroup = setBindGroup;
    pass.dispatchWorkgroups = dispatch;
    encoder.beginComputePass = begin;
    encoder.copyBufferToBuffer = copy;
  }
  return n;
}

/** Launches `affine` `n` times on (x, y) with the infos of `infos(i)`; returns the calls made. */
function launches(client: ComputeClient, x: ReturnType<ComputeClient["create"]>, infos: (i: number) => Uint32Array) {
  const y = client.empty(64 * 4);
  const calls = countCalls(() => {
    for (let i = 0; i < 10; i++) client.launch(affineKernel, [1], [x, y], infos(i));
  });
  return { calls, y };
}

Deno.test("identical info words on the same buffers set the bind group once per pass", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64).fill(3));
    client.launch(affineKernel, [1], [x, client.empty(256)], new Uint32Array([64, 2, 1])); // compiled and validated
    await client.sync();
    const info = new Uint32Array([64, 2, 1]);
    const { calls, y } = launches(client, x, () => info);
    assert.equal(calls.setBindGroup, 1);
    assert.deepEqual([...await readU32(client, y)], new Array(64).fill(7));
  }, { tasksMax: 4096 });
});

Deno.test("info words that change between launches rebind every time, and each launch reads its own words", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64).fill(3));
    client.launch(affineKernel, [1], [x, client.empty(256)], new Uint32Array([64, 2, 1]));
    await client.sync();
    const infos = (i: number) => new Uint32Array([64, 2, i % 2 === 0 ? 1 : 5]); // A, B, A, B ...
    const { calls, y } = launches(client, x, infos);
    assert.equal(calls.setBindGroup, 10);
    assert.deepEqual([...await readU32(client, y)], new Array(64).fill(3 * 2 + 5)); // the last launch's words
  }, { tasksMax: 4096 });
});

Deno.test("an indirect launch from createCount dispatches in place: no copy, one pass", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(256));
    const count = client.createCount(4, 1, 1); // 4 workgroups of 64
    client.launch(incKernel, count, [x]);
    await client.sync();
    const calls = countCalls(() => {
      for (let i = 0; i < 9; i++) client.launch(incKernel, count, [x]);
    });
    assert.equal(calls.copies, 0);
    assert.ok(calls.beginComputePass <= 1, `${calls.beginComputePass} passes`);
    assert.deepEqual([...await readU32(client, x)], new Array(256).fill(10));
  }, { tasksMax: 4096 });
});

Deno.test("an indirect launch from a count that shares a page with its bindings copies it in the pass, once while no binding covers it", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const count = client.create(new Uint32Array([1, 1, 1])); // ordinary memory: same pool page as x
    assert.equal(count.memory.slice!.page, x.memory.slice!.page);
    client.launch(incKernel, [1], [client.empty(256)]); // compiled and validated: nothing is held below
    await client.sync();
    const calls = countCalls(() => {
      for (let i = 0; i < 3; i++) client.launch(incKernel, count, [x]);
    });
    assert.equal(calls.copies, 0);
    assert.ok(calls.beginComputePass <= 1, `${calls.beginComputePass} passes`);
    // The first launch copies (its window, then its own group); no binding covers the count, so the next find it copied.
    assert.equal(calls.setBindGroup, 2);
    assert.deepEqual([...await readU32(client, x)], new Array(64).fill(3));
    // A launch that binds the count's own bytes may change them: the next launch copies again.
    const both = client.create(new Uint32Array([1, 1, 1, 5]));
    const y = client.empty(16);
    const info = new Uint32Array([4, 2, 1]); // y = 2 * both + 1
    client.launch(affineKernel, both, [both, y], info);
    await client.sync();
    const again = countCalls(() => {
      for (let i = 0; i < 3; i++) client.launch(affineKernel, both, [both, y], info);
    });
    assert.equal(again.setBindGroup, 6, "each copy binds its window, each launch its own group again");
    assert.deepEqual([...await readU32(client, y)], [3, 3, 3, 11]);
  });
});

Deno.test("info words repeated from one submit to the next are not uploaded again, and changed words are", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64).fill(3));
    const y = client.empty(64 * 4);
    client.launch(affineKernel, [1], [x, y], new Uint32Array([64, 2, 1]));
    await client.sync();
    const queue = client.server.device.queue;
    const writeBuffer = queue.writeBuffer;
    let uploads = 0;
    queue.writeBuffer = function (this: GPUQueue, ...args: unknown[]) {
      if ((args[0] as GPUBuffer).label.includes("info arena")) uploads++;
      (writeBuffer as (...a: unknown[]) => void).apply(this, args);
      return undefined;
    } as typeof writeBuffer;
    try {
      const a = new Uint32Array([64, 2, 1]);
      for (let i = 0; i < 8; i++) client.launch(affineKernel, [1], [x, y], a); // 4 submits of the same words
      assert.equal(uploads, 0, "the arena already holds these words");
      client.launch(affineKernel, [1], [x, y], new Uint32Array([64, 5, 0]));
      client.launch(affineKernel, [1], [x, y], new Uint32Array([64, 5, 0])); // a submit: new words, uploaded
      assert.equal(uploads, 1);
      assert.deepEqual([...await readU32(client, y)], new Array(64).fill(15));
      client.launch(affineKernel, [1], [x, y], a);
      client.launch(affineKernel, [1], [x, y], a);
      assert.equal(uploads, 2, "back to the first words: uploaded again");
      assert.deepEqual([...await readU32(client, y)], new Array(64).fill(7));
    } finally {
      queue.writeBuffer = writeBuffer;
    }
  }, { tasksMax: 2 });
});

Deno.test("launches alternating between two counts that share a page with their bindings copy each once per pass", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const counts = client.create(new Uint32Array([1, 1, 1, 2, 1, 1])); // ordinary memory: same pool page as x
    const [a, b] = [counts.view(0, 12), counts.view(12)];
    assert.equal(counts.memory.slice!.page, x.memory.slice!.page);
    client.launch(incKernel, a, [x]); // compiled and validated: nothing is held below
    await client.sync();
    client.write(x, new Uint32Array(64));
    const calls = countCalls(() => {
      for (let i = 0; i < 10; i++) client.launch(incKernel, i % 2 === 0 ? a : b, [x]);
    });
    assert.ok(calls.beginComputePass <= 1, `${calls.beginComputePass} passes`);
    assert.equal(calls.dispatches, 2, "one copy per count; the eight launches after them find theirs in its slot");
    assert.equal(calls.setBindGroup, 4, "each copy binds its window; the launch after it binds its group again");
    // incKernel adds 1 to 64 words per workgroup: a's launches cover words 0-63 once, b's twice (words 64+ are cut off).
    assert.deepEqual([...await readU32(client, x)], new Array(64).fill(10));
  }, { tasksMax: 4096 });
});

Deno.test("a replayed graph of launches from one count that shares a page with their bindings copies it once per replay", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const count = client.create(new Uint32Array([1, 1, 1])); // ordinary memory: same pool page as x
    assert.equal(count.memory.slice!.page, x.memory.slice!.page);
    const graph = await client.capture(() => {
      for (let i = 0; i < 10; i++) client.launch(incKernel, count, [x]);
    });
    await client.sync();
    client.write(x, new Uint32Array(64));
    const calls = countCalls(() => {
      graph.replay();
      graph.replay();
    });
    assert.equal(calls.dispatches, 2, "one copy per replay; twenty launches read it");
    assert.deepEqual([...await readU32(client, x)], new Array(64).fill(20));
    graph.destroy();
  }, { tasksMax: 4096 });
});
