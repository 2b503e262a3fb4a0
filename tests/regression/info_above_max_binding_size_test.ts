/**
 * Regression: info words larger than `maxStorageBufferBindingSize` were
 * accepted: the stream grew its info arena to hold them and bound them in a
 * bind group WebGPU refuses. The refusal came back as device validation
 * errors that named no kernel and took the whole submitted batch with them,
 * so valid launches encoded next to it never ran. Such a launch now queues a
 * `ResourceLimitError` (`binding-size`) on its stream, as a buffer binding
 * over the limit is refused, and encodes nothing; the launches around it run.
 */

import assert from "node:assert/strict";
import { defineKernel, ResourceLimitError, ServerUnhealthyError } from "../../mod.ts";
import { readU32, withClient } from "../_gpu.ts";

/** out[0] = the last info word. */
const lastWord = defineKernel({
  name: "last-word",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> info: array<u32>;
@compute @workgroup_size(1) fn main() { out[0] = info[arrayLength(&info) - 1u]; }`,
});

Deno.test("info words above maxStorageBufferBindingSize are refused as a queued binding-size limit, and the launches around them run", async () => {
  await withClient(async (client) => {
    const max = client.server.properties.memory.maxPageSize; // maxStorageBufferBindingSize
    const before = client.create(new Uint32Array(1));
    const big = client.create(new Uint32Array(1));
    const after = client.create(new Uint32Array(1));
    client.launch(lastWord, [1], [before], new Uint32Array([3, 4]));
    const info = new Uint32Array(max / 4 + 1);
    info[info.length - 1] = 7;
    client.launch(lastWord, [1], [big], info);
    client.launch(lastWord, [1], [after], new Uint32Array([5]));
    await assert.rejects(client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError, String(e));
      assert.equal(e.errors.length, 1, String(e));
      const err = e.errors[0];
      assert.ok(err instanceof ResourceLimitError, String(err));
      assert.equal(err.limit, "binding-size");
      assert.match(err.message, /last-word/);
      return true;
    });
    assert.deepEqual([...await readU32(client, before)], [4]);
    assert.deepEqual([...await readU32(client, big)], [0], "the refused launch did not run");
    assert.deepEqual([...await readU32(client, after)], [5]);
  });
});
