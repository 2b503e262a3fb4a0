/**
 * Contract under test: software graph capture and replay, behaviours 39-48
 * of the contract (section 5.4), plus the lifecycle rules: out-of-order calls
 * are typed errors that leave the stream usable, reads/syncs/profiles are
 * refused while recording, and a write inside the window fails the capture.
 */

import assert from "node:assert/strict";
import { type ComputeClient, defineKernel, GraphStateError, type Handle, ServerUnhealthyError } from "../../mod.ts";
import type { Transport } from "../../mod.ts";
import { axpbInfo, axpbKernel, plusOneKernel as plusOne, readF32 } from "../_gpu.ts";
import { captureState, clientTest, graphDoors, inProcess, serverStats } from "../_clients.ts";

/** out = a + b. */
const addTwo = defineKernel({
  name: "add-two",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&out)) { out[g.x] = a[g.x] + b[g.x]; }
}`,
});

/**
 * Captures tmp = input + 1, then output = tmp + input (= 2 input + 1), with a
 * 16-byte tmp allocated in the window (anew each time the capture runs the
 * function); returns the graph and the last tmp.
 */
async function captureWithTemporary(client: ComputeClient<Transport>, input: Handle, output: Handle) {
  let tmp!: Handle;
  const graph = await client.capture(() => {
    tmp?.release();
    tmp = client.empty(16);
    client.launch(plusOne, [1], [input, tmp]);
    client.launch(addTwo, [1], [tmp, input, output]);
  });
  return { graph, tmp };
}

/** Creates 8 sentinels of [999, 999, 999, 999] in persistent mode (which reuses any free slice of their size). */
function persistentSentinels(client: ComputeClient<Transport>): Handle[] {
  client.allocationMode("persistent");
  const sentinels = Array.from({ length: 8 }, () => client.create(new Float32Array([999, 999, 999, 999])));
  client.allocationMode("auto");
  return sentinels;
}

clientTest("39: a captured launch replays to [2,3,4,5], and again on a second replay", async (client) => {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const graph = await client.capture(() => client.launch(plusOne, [1], [input, output]));
  client.write(output, new Float32Array([0, 0, 0, 0]));
  graph.replay();
  assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  graph.replay();
  assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  graph.destroy();
});

clientTest(
  "40: the recorded pass does not execute: warm-up plus 2 replays of 150 ping-pong launches is 3 passes",
  async (client) => {
    const a = client.create(new Float32Array(4));
    const b = client.create(new Float32Array(4));
    const graph = await client.capture(() => {
      for (let i = 0; i < 150; i++) client.launch(plusOne, [1], i % 2 === 0 ? [a, b] : [b, a]);
    });
    // warm-up: 150 steps; replays: 150 each; the recording itself: none.
    graph.replay();
    graph.replay();
    assert.deepEqual([...await readF32(client, a)], [450, 450, 450, 450]);
    graph.destroy();
  },
  { tasksMax: 32 },
);

clientTest("41: inputs rewritten between replays are picked up", async (client) => {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const graph = await client.capture(() => client.launch(plusOne, [1], [input, output]));
  client.write(input, new Float32Array([10, 20, 30, 40]));
  graph.replay();
  assert.deepEqual([...await readF32(client, output)], [11, 21, 31, 41]);
  client.write(input, new Float32Array([100, 100, 100, 100]));
  graph.replay();
  client.write(input, new Float32Array([7, 7, 7, 7])); // after the replay: must not overtake it
  assert.deepEqual([...await readF32(client, output)], [101, 101, 101, 101]);
  graph.destroy();
});

clientTest("42: allocating inside the capture window is allowed and the replay is correct", async (client) => {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const graph = await client.capture(() => {
    const big = client.empty(3_145_733);
    big.release();
    client.launch(plusOne, [1], [input, output]);
  });
  graph.replay();
  assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  graph.destroy();
});

clientTest("43: intermediates allocated in the window stay pinned after the user drops them", async (client) => {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const { graph, tmp } = await captureWithTemporary(client, input, output); // output = 2 input + 1
  const slice = tmp.memory.slice;
  tmp.release();
  if (inProcess(client)) assert.equal(slice!.isFree(), false, "the graph pins it");
  // Sentinels of the same size in persistent mode would reuse tmp's slice if it were free.
  const sentinels = persistentSentinels(client);
  if (inProcess(client)) assert.ok(sentinels.every((s) => s.memory.slice !== slice));
  graph.replay();
  assert.deepEqual([...await readF32(client, output)], [3, 5, 7, 9]);
  for (const s of sentinels) assert.deepEqual([...await readF32(client, s)], [999, 999, 999, 999]);
  graph.destroy();
});

clientTest("44: destroying a graph with a replay still queued keeps that replay correct", async (client) => {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const { graph, tmp } = await captureWithTemporary(client, input, output);
  tmp.release();
  client.write(output, new Float32Array(4));
  graph.replay();
  graph.destroy();
  const sentinels = persistentSentinels(client);
  assert.deepEqual([...await readF32(client, output)], [3, 5, 7, 9]);
  for (const s of sentinels) assert.deepEqual([...await readF32(client, s)], [999, 999, 999, 999]);
});

clientTest("45: out-of-order capture calls are GraphStateErrors and leave the stream usable", async (client) => {
  await assert.rejects(
    () => client.beginCapture(),
    (e: unknown) => e instanceof GraphStateError && /graphPrepare/.test(e.message),
  );
  await assert.rejects(() => client.endCapture(), GraphStateError);
  client.graphPrepare();
  assert.throws(
    () => client.graphPrepare(),
    (e: unknown) => e instanceof GraphStateError && /already prepared/.test(e.message),
  );
  await client.beginCapture();
  await assert.rejects(() => client.beginCapture(), /already recording/);
  assert.throws(() => client.graphPrepare(), /already recording/);
  const graph = await client.endCapture(); // an empty graph is fine
  graph.destroy();
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const g2 = await client.capture(() => client.launch(plusOne, [1], [input, output]));
  g2.replay();
  assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  g2.destroy();
});

clientTest(
  "46: a read inside the window is refused and the capture still completes; a write makes endCapture fail",
  async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    client.graphPrepare();
    client.launch(plusOne, [1], [input, output]);
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5], "reads are allowed during the warm-up");
    await client.beginCapture();
    client.launch(plusOne, [1], [input, output]);
    await assert.rejects(() => client.read(output), GraphStateError);
    await assert.rejects(() => client.sync(), GraphStateError);
    await assert.rejects(() => client.startProfile(), GraphStateError);
    const graph = await client.endCapture();
    client.write(input, new Float32Array([5, 5, 5, 5]));
    graph.replay();
    assert.deepEqual([...await readF32(client, output)], [6, 6, 6, 6]);
    graph.destroy();

    client.graphPrepare();
    await client.beginCapture();
    client.launch(plusOne, [1], [input, output]);
    client.write(input, new Float32Array([9, 9, 9, 9]));
    await assert.rejects(
      () => client.endCapture(),
      (e: unknown) => e instanceof ServerUnhealthyError && e.errors[0] instanceof GraphStateError,
    );
    client.launch(plusOne, [1], [input, output]);
    assert.deepEqual([...await readF32(client, output)], [6, 6, 6, 6], "the stream works normally afterwards");
  },
);

clientTest("47: another stream working during the window does not leak into the graph", async (client) => {
  const other = client.onStream(7);
  const a = other.create(new Float32Array([7, 7, 7, 7]));
  const b = other.empty(16);
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const graph = await client.capture(() => {
    client.launch(plusOne, [1], [input, output]);
    other.launch(axpbKernel, [1], [a, b], axpbInfo(4, 2, 0));
  });
  assert.deepEqual([...await readF32(other, b)], [14, 14, 14, 14]);
  other.write(b, new Float32Array(4));
  graph.replay();
  assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  assert.deepEqual([...await readF32(other, b)], [0, 0, 0, 0], "the other stream's launch was not captured");
  graph.destroy();
});

clientTest(
  "48: replaying an unknown or destroyed graph queues a GraphStateError; destroying twice is a no-op",
  async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const graph = await client.capture(() => client.launch(plusOne, [1], [input, output]));
    graph.destroy();
    graph.destroy();
    graphDoors(client).graphDestroy(graph.id, 0);
    graph.replay();
    graphDoors(client).replay(123456789, 0);
    await assert.rejects(
      () => client.flush(),
      (e: unknown) =>
        e instanceof ServerUnhealthyError && e.errors.length === 2 && e.errors[0] instanceof GraphStateError,
    );
    await client.flush();
    assert.equal((await serverStats(client)).graphCount, 0);
  },
);

clientTest(
  "a graph with info words and an indirect count replays them, and info changes per dispatch",
  async (client) => {
    const src = client.create(new Float32Array([1, 2, 3, 4]));
    const dst = client.empty(16);
    const counts = client.create(new Uint32Array([1, 1, 1]));
    const graph = await client.capture(() => {
      client.launch(axpbKernel, [1], [src, dst], axpbInfo(4, 3, 1));
      client.launch(axpbKernel, counts, [dst, dst], axpbInfo(4, 2, 0));
    });
    client.write(dst, new Float32Array(4));
    graph.replay();
    assert.deepEqual([...await readF32(client, dst)], [8, 14, 20, 26]);
    client.write(counts, new Uint32Array([0, 1, 1])); // the indirect count is read at replay time
    graph.replay();
    assert.deepEqual([...await readF32(client, dst)], [4, 7, 10, 13]);
    graph.destroy();
  },
);

clientTest("a capture whose function throws leaves the stream usable and unarmed", async (client) => {
  await assert.rejects(() =>
    client.capture(() => {
      throw new Error("boom");
    }), /boom/);
  assert.equal(captureState(client, 0), "none");
  const x = client.create(new Float32Array([1, 1, 1, 1]));
  const y = client.empty(16);
  client.launch(plusOne, [1], [x, y]);
  assert.deepEqual([...await readF32(client, y)], [2, 2, 2, 2]);
});

clientTest(
  "capture(fn) refuses a recording whose launches differ from its warm-up's, naming the first difference",
  async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    let runs = 0;
    // The second run (the recorded one) launches another count: replays would repeat it, not what fn does.
    await assert.rejects(
      () => client.capture(() => client.launch(plusOne, [++runs], [input, output])),
      (e: unknown) => {
        const err = e instanceof ServerUnhealthyError ? e.errors[0] : e;
        assert.ok(err instanceof GraphStateError, String(e));
        assert.equal(err.operation, "capture");
        assert.match(
          err.message,
          /launch 1 differs: the warm-up ran plus-one \[1, 1, 1\].*the recorded run plus-one \[2, 1, 1\]/,
        );
        return true;
      },
    );
    assert.equal(captureState(client, client.stream), "none", "the stream can capture again");
    // A second run that launches nothing is refused too.
    runs = 0;
    await assert.rejects(
      () => client.capture(() => void (runs++ === 0 && client.launch(plusOne, [1], [input, output]))),
      /recorded run nothing/,
    );
    // The same launches both times capture fine, and the graph replays them.
    const graph = await client.capture(() => client.launch(plusOne, [1], [input, output]));
    graph.replay();
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
    assert.equal((await serverStats(client)).graphCount, 1);
  },
);
