/**
 * `createCount` / `emptyCount`: indirect workgroup counts from pages that hold
 * counts only, written by the host or by a kernel, counted in memory reports.
 */

import assert from "node:assert/strict";
import { defineKernel, ResourceLimitError } from "../../mod.ts";
import { incKernel, withClient } from "../_gpu.ts";
import { clientTest } from "../_clients.ts";

/** Writes [n / 64 rounded up, 1, 1] into a count: the workgroups to cover n items. */
const sizeCount = defineKernel({
  name: "size-count",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> count: array<u32, 3>;
@group(0) @binding(1) var<storage, read> n: u32;
@compute @workgroup_size(1) fn main() { count[0] = (n + 63u) / 64u; count[1] = 1u; count[2] = 1u; }`,
});

clientTest("createCount holds [x, y, z] and an indirect launch runs that many workgroups", async (client) => {
  {
    using count = client.createCount(2);
    assert.equal(count.sizeInUse, 12);
    assert.deepEqual([...await client.read(count, Uint32Array)], [2, 1, 1]);
    using x = client.create(new Uint32Array(256));
    client.launch(incKernel, count, [x]);
    const got = await client.read(x, Uint32Array);
    assert.deepEqual([...got.slice(0, 128)], new Array(128).fill(1));
    assert.deepEqual([...got.slice(128)], new Array(128).fill(0));
  }
});

clientTest(
  "a kernel writes an emptyCount through its own storage binding, and a later launch dispatches from it",
  async (client) => {
    {
      using count = client.emptyCount();
      using x = client.create(new Uint32Array(256));
      client.launch(sizeCount, [1], [count], new Uint32Array([130])); // 3 workgroups
      client.launch(incKernel, count, [x]);
      const got = await client.read(x, Uint32Array);
      assert.equal(got.filter((v) => v === 1).length, 192);
    }
  },
);

Deno.test("counts live on pages of their own, reported apart, and a released count's slot is reused", async () => {
  await withClient((client) => {
    const x = client.create(new Uint32Array(64));
    const a = client.createCount();
    const b = client.createCount();
    const page = (h: typeof a) => h.memory.slice!.page;
    assert.notEqual(page(a), page(x));
    assert.equal(page(a), page(b));
    const report = client.memoryReport();
    assert.equal(report.counts.usage.numberAllocs, 2);
    assert.equal(report.counts.pages, 1);
    const slot = a.memory.slice!.offset;
    a.release();
    const c = client.createCount();
    assert.equal(c.memory.slice!.offset, slot);
    assert.equal(client.memoryReport().counts.usage.numberAllocs, 2);
    assert.equal(client.memoryUsage().numberAllocs, 3);
    for (const h of [b, c, x]) h.release();
  });
});

clientTest("createCount refuses counts that are not u32 integers", (client) => {
  assert.throws(() => client.createCount(-1), /createCount: x must be an integer in \[0, 2\^32\), got -1/);
  assert.throws(() => client.createCount(1, 1.5), /createCount: y must be/);
  assert.throws(() => client.createCount(1, 1, 2 ** 32), /createCount: z must be/);
});

clientTest("a count allocation comes from the count pool, reported apart from storage", async (client) => {
  using x = client.create(new Uint32Array(64));
  using a = client.createCount();
  const report = await client.memoryReport();
  assert.equal(report.counts.usage.numberAllocs, 1);
  assert.equal(report.counts.pages, 1);
  assert.equal((await client.memoryUsage()).numberAllocs, 2);
  assert.ok(x.sizeInUse > 0 && a.sizeInUse === 12);
});

clientTest(
  "createCount and write refuse a count above maxComputeWorkgroupsPerDimension, which WebGPU would skip without an error",
  async (client) => {
    const max = client.properties.hardware.maxCubeCount[0];
    assert.throws(() => client.createCount(max + 1), (e: unknown) => {
      assert.ok(e instanceof ResourceLimitError, String(e));
      assert.equal(e.limit, "cube-count");
      assert.deepEqual([...e.requested], [max + 1, 1, 1]);
      assert.match(e.message, /createCount.*maxComputeWorkgroupsPerDimension/);
      return true;
    });
    const count = client.createCount(2);
    assert.throws(() => client.write(count, new Uint32Array([1, max + 5, 1])), ResourceLimitError);
    client.write(count, new Uint32Array([max, 1, 1])); // at the limit is fine
    assert.deepEqual([...await client.read(count, Uint32Array)], [max, 1, 1]);
    // Ordinary memory holding the same words is not a count: writing it is not checked.
    const plain = client.create(new Uint32Array(3));
    client.write(plain, new Uint32Array([max + 1, 1, 1]));
  },
);
