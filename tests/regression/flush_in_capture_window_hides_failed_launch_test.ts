/**
 * Regression: a launch recorded inside a capture window can fail after it
 * was queued: its kernel fails to compile (the compile error is queued once
 * validation is known). Contract 5.3 makes such a queued error fail
 * `endCapture`. (A launch refused for a device limit used to be queued the
 * same way; it is now refused at the call, issue 30, and records nothing.) But a `flush` inside the window
 * drained it like any other error, and `endCapture` then stored a graph that
 * silently lacked the refused launch, or that held the failed pipeline: every
 * replay of it then invalidated the whole batch it was encoded into, so the
 * valid launches queued around the replay never ran.
 *
 * The earlier fix (flush_in_capture_window_hides_refused_write_test.ts)
 * remembered only refused writes and replays; every error queued on the
 * stream while it records is now remembered by the recording.
 *
 * Found by the graph-lifetime audit.
 */

import assert from "node:assert/strict";
import {
  CompilationError,
  type ComputeClient,
  defineKernel,
  type Handle,
  ResourceLimitError,
  ServerUnhealthyError,
} from "../../mod.ts";
import { incKernel, plusOneKernel as plusOne, readF32, readU32, withClient } from "../_gpu.ts";
import type { Kernel } from "../../mod.ts";

/** A kernel whose WGSL does not compile. */
const broken = defineKernel({
  name: "broken",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] = undeclared; }`,
});

/** A kernel whose workgroup (1024 x 1024 invocations) exceeds every device's limit. */
const huge = defineKernel({
  name: "huge",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1024, 1024, 1) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] = 1u; }`,
});

/** A predicate for a `ServerUnhealthyError` holding an error of `type`. */
const failedWith = (type: new (...args: never[]) => Error) => (e: unknown): boolean =>
  e instanceof ServerUnhealthyError && e.errors.some((x) => x instanceof type);

/**
 * Captures a warm-up launch, then `plusOne` and `bad` while recording: a flush
 * in the window reports `bad`'s error, `endCapture` still fails with it, and
 * no graph is stored. Returns `plusOne`'s input and output.
 */
async function failedCapture(
  client: ComputeClient,
  bad: Kernel,
  type: new (...args: never[]) => Error,
  noGraph: string,
): Promise<{ input: Handle; output: Handle }> {
  const input = client.create(new Float32Array([1, 2, 3, 4]));
  const output = client.empty(16);
  const x = client.create(new Uint32Array([1, 1, 1, 1]));
  client.graphPrepare();
  client.launch(plusOne, [1], [input, output]);
  await client.beginCapture();
  client.launch(plusOne, [1], [input, output]);
  client.launch(bad, [1], [x]);
  await assert.rejects(() => client.flush(), failedWith(type), "a drain reports it");
  await assert.rejects(() => client.endCapture(), failedWith(type));
  await client.flush(); // nothing is left queued
  assert.equal(client.server.graphCount, 0, noGraph);
  return { input, output };
}

Deno.test("a kernel that fails to compile inside a capture window makes endCapture fail even after a flush reported it", async () => {
  await withClient(async (client) => {
    const { input, output } = await failedCapture(
      client,
      broken,
      CompilationError,
      "no graph holding the failed pipeline was stored",
    );

    // The stream works normally: y = 1 + 1 + 1, output = input + 1.
    const y = client.create(new Uint32Array([1, 1, 1, 1]));
    client.write(output, new Float32Array(4));
    client.launch(incKernel, [1], [y]);
    client.launch(plusOne, [1], [input, output]);
    client.launch(incKernel, [1], [y]);
    assert.deepEqual([...await readU32(client, y)], [3, 3, 3, 3]);
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  });
});

Deno.test("a launch refused for a device limit inside a capture window throws at the call, and the graph holds the launches around it", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const x = client.create(new Uint32Array([1, 1, 1, 1]));
    client.graphPrepare();
    client.launch(plusOne, [1], [input, output]);
    await client.beginCapture();
    client.launch(plusOne, [1], [input, output]);
    assert.throws(() => client.launch(huge, [1], [x]), ResourceLimitError);
    await client.flush();
    const graph = await client.endCapture();
    client.write(input, new Float32Array([5, 6, 7, 8]));
    graph.replay();
    assert.deepEqual([...await readF32(client, output)], [6, 7, 8, 9], "the replay ran the launch recorded");
    assert.deepEqual([...await readU32(client, x)], [1, 1, 1, 1], "the refused launch ran nowhere");
  });
});
