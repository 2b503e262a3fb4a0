/**
 * Found by the kernel-cache audit: when a pipeline's error scopes reject
 * (rather than resolve with an error), the pipeline cache marked the entry
 * failed but left it cached. Every later launch of that kernel then reported
 * the old failure and nothing recompiled it, though the contract (1.2) does
 * not cache failed compilations. Both failure paths now drop the entry.
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { ServerLogger } from "../../server.ts";
import { PipelineCache } from "../../src/kernel/pipeline_cache.ts";

const copy = defineKernel({
  name: "copy",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&b)) { b[g.x] = a[g.x]; }
}`,
});

Deno.test("a pipeline whose error scopes reject is not cached: the next request compiles it again", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice();
  try {
    const cache = new PipelineCache(device, new ServerLogger({}));
    const pop = device.popErrorScope.bind(device);
    device.popErrorScope = () => pop().then(() => Promise.reject(new Error("scope lost")));
    const first = cache.get(copy, 2, false);
    await first.checked;
    assert.equal(first.state, "failed");
    device.popErrorScope = pop; // scopes work again
    const second = cache.get(copy, 2, false);
    assert.notEqual(second, first, "the failed entry was not served again");
    assert.equal(cache.compiled, 2);
    await second.checked;
    assert.equal(second.state, "valid");
  } finally {
    device.destroy();
  }
});
