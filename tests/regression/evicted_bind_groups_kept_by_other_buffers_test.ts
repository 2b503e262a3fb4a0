/**
 * Regression: the bind group cache indexes each bind group under every buffer
 * it binds, so that destroying any one of them evicts it. Eviction removed
 * the bind group from the cache and dropped the destroyed buffer's index list,
 * but left the bind group in the index lists of the other buffers it bound.
 * A long-lived buffer (a persistent tensor, or the stream's info arena, which
 * every launch with info words binds) therefore kept every bind group ever
 * created with it, and the destroyed buffers those bind groups hold, for as
 * long as it lived: memory grew without bound over a long run that churns
 * pages, and the cache's own limit never cleared it (the evicted entries no
 * longer counted toward it).
 */

import assert from "node:assert/strict";
import { BindGroupCache } from "../../src/kernel/bind_group_cache.ts";
import { macrotask } from "../_gpu.ts";

/** Creates `rounds` bind groups of (long-lived, churned) buffers, evicting each churned one; returns weak refs to them. */
function churn(
  device: GPUDevice,
  cache: BindGroupCache,
  layout: GPUBindGroupLayout,
  kept: GPUBuffer,
  rounds: number,
): WeakRef<GPUBindGroup>[] {
  const refs: WeakRef<GPUBindGroup>[] = [];
  for (let i = 0; i < rounds; i++) {
    const churned = device.createBuffer({ label: `churned ${i}`, size: 256, usage: GPUBufferUsage.STORAGE });
    const id = 1_000_000 + i;
    cache.ids[0] = 1;
    cache.offsets[0] = 0;
    cache.sizes[0] = 256;
    cache.buffers[0] = kept;
    cache.ids[1] = id;
    cache.offsets[1] = 0;
    cache.sizes[1] = 256;
    cache.buffers[1] = churned;
    refs.push(new WeakRef(cache.get(0, layout, 2, null, 0, 0)));
    cache.evictStorage(id);
    churned.destroy();
  }
  cache.buffers.length = 0;
  return refs;
}

/** The bind group binding `kept` twice, at offsets 0 and 256. */
function live(cache: BindGroupCache, layout: GPUBindGroupLayout, kept: GPUBuffer): GPUBindGroup {
  for (let i = 0; i < 2; i++) {
    cache.ids[i] = 1;
    cache.offsets[i] = 256 * i;
    cache.sizes[i] = 256;
    cache.buffers[i] = kept;
  }
  return cache.get(0, layout, 2, null, 0, 0);
}

Deno.test("a bind group evicted with one of its buffers is not kept alive by the other buffers it bound", async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  assert.ok(gc, "run with --v8-flags=--expose-gc (deno task test does)");
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice();
  try {
    const layout = device.createBindGroupLayout({
      entries: [0, 1].map((binding) => ({
        binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: "storage" as const },
      })),
    });
    const cache = new BindGroupCache(device);
    const kept = device.createBuffer({ label: "long-lived", size: 512, usage: GPUBufferUsage.STORAGE });
    const first = live(cache, layout, kept);
    const refs = churn(device, cache, layout, kept, 64);
    assert.equal(cache.size, 1, "every churned bind group was evicted");
    assert.equal(live(cache, layout, kept), first, "the live bind group is still cached");
    assert.equal(cache.created, 65);
    for (let i = 0; i < 10 && refs.some((r) => r.deref() !== undefined); i++) {
      await macrotask();
      gc!();
    }
    const alive = refs.filter((r) => r.deref() !== undefined).length;
    assert.equal(alive, 0, `${alive} of ${refs.length} evicted bind groups are still reachable`);
    kept.destroy();
  } finally {
    device.destroy();
  }
});
