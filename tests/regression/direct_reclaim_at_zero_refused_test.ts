/**
 * Regression: `resolveMemoryConfiguration` refused a direct pool with
 * `reclaimAt: 0` as `zero-size`. The contract (1.11) raises `ZeroSize` only
 * for `page_size`, `max_slice_size` and `max_pool_size`; `Direct{reclaim_at}`
 * is a watermark, and 0 is a valid one: every new buffer releases all the free
 * buffers of the pool (3.3).
 */

import assert from "node:assert/strict";
import type { ManagedMemory } from "../../server.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { resolveMemoryConfiguration } from "../../src/memory/memory_config.ts";
import { FakeStorage } from "../_fakes.ts";

const props = { maxPageSize: 1 << 27, alignment: 32, maxBufferSize: 1 << 28 };

Deno.test("a direct pool with reclaimAt 0 is a valid layout that keeps no free buffer past a new one", () => {
  const pools = resolveMemoryConfiguration({ pools: [{ kind: "direct", reclaimAt: 0 }] }, props);
  assert.deepEqual(pools, [{ kind: "direct", reclaimAt: 0 }]);
  const mm = new MemoryManager(new FakeStorage(32), { pools, label: "test" });
  const drop = (d: ManagedMemory) => d.drop();
  drop(mm.reserve(100));
  drop(mm.reserve(200));
  assert.equal(mm.report().dynamic[0]!.pages, 1, "making the 200 B buffer released the free 100 B one");
  const kept = mm.reserve(300);
  assert.equal(mm.report().dynamic[0]!.pages, 1, "a live buffer is never released");
  assert.equal(mm.usage().bytesReserved, 320);
  drop(kept);
});
