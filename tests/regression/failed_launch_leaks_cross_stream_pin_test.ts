/**
 * Regression: a launch that binds memory owned by another stream pins it
 * (`Stream.resolveBindings` pushes it to the stream's pending pins) until the
 * submission that runs it completes. When the launch is never dispatched
 * (its kernel fails to compile, so the held launch is dropped) and the next
 * submit of the stream has nothing to submit, `Stream.submit` empties the
 * pending pins without unpinning them: the memory stays in use forever, is
 * never reused, and `memoryUsage().bytesInUse` never returns to 0.
 *
 * Found by the model test (tests/model, seed 608 at 3000 steps: a usage check
 * 800 B over the model after a broken kernel bound another stream's memory).
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { withClient } from "../_gpu.ts";

const broken = defineKernel({
  name: "regression-broken-pin",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = no_such_value; }
}`,
});

Deno.test("a launch of a kernel that fails to compile does not keep another stream's memory pinned", async () => {
  await withClient(async (client) => {
    const other = client.onStream(1);
    const x = client.create(new Uint32Array(64)); // owned by stream 0
    await client.sync();
    other.launch(broken, [1], [x]); // stream 1 pins x; the launch is dropped once the compile fails
    await assert.rejects(() => other.flush()); // raises the CompilationError
    x.release();
    await client.sync();
    await other.sync();
    client.memoryCleanup();
    const usage = client.memoryUsage();
    assert.equal(usage.bytesInUse, 0, JSON.stringify(usage));
    assert.equal(usage.numberAllocs, 0, JSON.stringify(usage));
  });
});
