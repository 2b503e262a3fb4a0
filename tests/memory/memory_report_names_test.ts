/**
 * Contract under test: a memory report names each pool as its configuration
 * does (issue 32.6): `shape.kind` is the `PoolConfig`'s `kind`, and every
 * other field of the shape is the config's field of the same name, so a
 * report's effective pools install again as they are.
 */

import assert from "node:assert/strict";
import type { PoolConfig } from "../../mod.ts";
import type { PoolShape } from "../../server.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { resolveMemoryConfiguration } from "../../src/memory/memory_config.ts";
import { FakeStorage } from "../_fakes.ts";

const props = { maxPageSize: 1 << 27, alignment: 256, maxBufferSize: 1 << 28 };
const configured: PoolConfig[] = resolveMemoryConfiguration({
  pools: [
    { kind: "exclusive", maxAllocSize: 0 },
    { kind: "sliced", pageSize: 1000, maxPoolSize: 8000, fit: "best", deallocPeriod: 50 },
    { kind: "exclusive", maxAllocSize: 5000, sizeClasses: 4, deallocPeriod: 10 },
    { kind: "direct", reclaimAt: 3000 },
  ],
}, props);

function shapesOf(pools: PoolConfig[]): PoolShape[] {
  const mm = new MemoryManager(new FakeStorage(props.alignment), { pools, label: "names" });
  return mm.report().dynamic.map((p) => p.shape);
}

const isConfig = (s: PoolShape): s is Extract<PoolShape, PoolConfig> => s.kind !== "persistent";

Deno.test("each pool of a report has the kind and the field names of the PoolConfig that made it", () => {
  const shapes = shapesOf(configured);
  assert.deepEqual(shapes.map((s) => s.kind), ["exclusive", "sliced", "exclusive", "direct"]);
  assert.deepEqual(shapes, configured, "same names, same effective values");
  for (const s of shapes) assert.ok(!("type" in s), `no field named type in ${JSON.stringify(s)}`);
});

Deno.test("a report's dynamic pool shapes install again as PoolConfigs and report the same shapes", () => {
  const shapes = shapesOf(configured);
  const again = shapes.filter(isConfig);
  assert.equal(again.length, shapes.length);
  assert.deepEqual(shapesOf(again), shapes);
});

Deno.test("the persistent pool reports kind persistent", () => {
  const mm = new MemoryManager(new FakeStorage(props.alignment), { pools: configured, label: "names" });
  assert.deepEqual(mm.report().persistent.shape, { kind: "persistent" });
});
