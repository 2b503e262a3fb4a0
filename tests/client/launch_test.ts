/**
 * Contract under test: launches compute what a CPU reference computes; static
 * and indirect counts dispatch the right workgroups; `skip` compiles without
 * dispatching; device-side failures are queued and raised at the next drain,
 * and the runtime keeps working afterwards.
 */

import assert from "node:assert/strict";
import { CompilationError, defineKernel, ResourceLimitError, ServerUnhealthyError } from "../../mod.ts";
import { addKernel, axpbInfo, axpbKernel, incKernel, readF32, readU32, rng } from "../_gpu.ts";
import { clientTest, inProcess, serverStats } from "../_clients.ts";
import type { Kernel } from "../../mod.ts";

clientTest("ComputeClient.launch() of an elementwise add equals the CPU reference", async (client) => {
  const n = 10_000;
  const r = rng(1);
  const a = Float32Array.from({ length: n }, () => r() * 100 - 50);
  const b = Float32Array.from({ length: n }, () => r() * 100 - 50);
  const ha = client.create(a);
  const hb = client.create(b);
  const out = client.empty(n * 4);
  client.launch(addKernel, [Math.ceil(n / 64)], [ha, hb, out], new Uint32Array([n]));
  const got = await readF32(client, out);
  const want = a.map((v, i) => Math.fround(v + b[i]!));
  assert.deepEqual(got, want);
});

clientTest("info words that change every launch reach each dispatch", async (client) => {
  const n = 100;
  const src = client.create(Float32Array.from({ length: n }, (_, i) => i));
  const outs = Array.from({ length: 20 }, () => client.empty(n * 4));
  outs.forEach((o, k) => client.launch(axpbKernel, [2], [src, o], axpbInfo(n, k, -k / 2)));
  const all = await client.readMany(outs);
  all.forEach((bytes, k) => {
    const got = new Float32Array(bytes.buffer, bytes.byteOffset, n);
    for (let i = 0; i < n; i++) assert.equal(got[i], Math.fround(Math.fround(i * k) - k / 2), `out ${k}[${i}]`);
  });
});

clientTest("1,000 launches then one read equal the reference", async (client) => {
  const x = client.create(new Uint32Array(257));
  for (let i = 0; i < 1000; i++) client.launch(incKernel, [5], [x]);
  const got = await readU32(client, x);
  assert.ok(got.every((v) => v === 1000), `first wrong value: ${got.find((v) => v !== 1000)}`);
});

clientTest("an indirect launch dispatches the counts stored in device memory", async (client) => {
  const mark = defineKernel({
    name: "mark",
    wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  out[g.x + g.y * nw.x] = 1u + g.x + 10u * g.y;
}`,
  });
  const out = client.create(new Uint32Array(32));
  const counts = client.create(new Uint32Array([7, 3, 1]));
  client.launch(mark, counts, [out]);
  const got = await readU32(client, out);
  const want = new Uint32Array(32);
  for (let y = 0; y < 3; y++) for (let x = 0; x < 7; x++) want[x + y * 7] = 1 + x + 10 * y;
  assert.deepEqual(got, want);
  // A count handle sharing a page with a bound buffer works too (copied in the pass first).
  const both = client.create(new Uint32Array([2, 1, 1, 0, 0, 0]));
  const inc2 = defineKernel({
    name: "inc-tail",
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3u) { x[3u + g.x] = x[3u + g.x] + 5u; }`,
  });
  const view = both.view(0, 12);
  client.launch(inc2, view, [both]);
  assert.deepEqual([...await readU32(client, both)], [2, 1, 1, 5, 5, 0]);
  if (inProcess(client)) assert.equal(both.memory.slice?.page, view.memory.slice?.page);
});

clientTest("a launch with a zero count is a no-op and compiles nothing", async (client) => {
  const x = client.create(new Uint32Array([7, 8]));
  const before = (await serverStats(client)).pipelinesCompiled;
  client.launch(incKernel, [0, 1, 1], [x]);
  client.launch(incKernel, { kind: "static", x: 4, y: 0, z: 1 }, [x]);
  assert.equal((await serverStats(client)).pipelinesCompiled, before);
  assert.deepEqual([...await readU32(client, x)], [7, 8]);
  const zeros = client.create(new Uint32Array([0, 0, 0]));
  client.launch(incKernel, zeros, [x]);
  assert.deepEqual([...await readU32(client, x)], [7, 8]);
});

clientTest("skip mode compiles and caches the pipeline but writes nothing", async (client) => {
  const out = client.create(new Float32Array([9, 9, 9]));
  const a = client.create(new Float32Array([0, 1, 2]));
  const b = client.create(new Float32Array([4, 4, 4]));
  const before = (await serverStats(client)).pipelinesCompiled;
  client.launch(addKernel, [1], [a, b, out], new Uint32Array([3]), { mode: "skip" });
  await client.flush();
  assert.equal((await serverStats(client)).pipelinesCompiled, before + 1);
  assert.deepEqual([...await readF32(client, out)], [9, 9, 9]);
  client.launch(addKernel, [1], [a, b, out], new Uint32Array([3]));
  assert.deepEqual([...await readF32(client, out)], [4, 5, 6]);
  assert.equal((await serverStats(client)).pipelinesCompiled, before + 1, "the skipped launch's pipeline was reused");
});

const broken: Kernel = defineKernel({
  name: "broken",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 1.5; }`,
});

clientTest("skip mode of a broken kernel fails at the next flush", async (client) => {
  const x = client.create(new Uint32Array([3]));
  client.launch(broken, [1], [x], undefined, { mode: "skip" });
  await assert.rejects(() => client.flush(), (e: unknown) => {
    assert.ok(e instanceof ServerUnhealthyError);
    assert.ok(e.errors[0] instanceof CompilationError);
    return true;
  });
  await client.flush();
  assert.deepEqual([...await readU32(client, x)], [3]);
});

clientTest(
  "a WGSL compile error is a CompilationError naming the kernel, and work around it still runs",
  async (client) => {
    const x = client.create(new Uint32Array(64));
    client.launch(incKernel, [1], [x]);
    client.launch(broken, [1], [x]);
    client.launch(incKernel, [1], [x]);
    let caught: unknown;
    try {
      await client.read(x);
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof ServerUnhealthyError, "the read reports the queued error");
    const err = caught.errors[0];
    assert.ok(err instanceof CompilationError);
    assert.equal(err.kernel, "broken");
    assert.match(err.compilerMessage, /f32|AbstractFloat|u32/);
    assert.match(err.message, /broken/);
    // The queue was drained, and the valid launches on both sides ran.
    await client.flush();
    assert.ok((await readU32(client, x)).every((v) => v === 2));
  },
);

clientTest("a failed pipeline is not cached: each launch of a broken kernel queues an error", async (client) => {
  const x = client.create(new Uint32Array([0]));
  client.launch(broken, [1], [x]);
  await assert.rejects(() => client.flush(), ServerUnhealthyError);
  client.launch(broken, [1], [x]);
  client.launch(broken, [1], [x]);
  client.launch(broken, [1], [x]);
  await assert.rejects(
    () => client.flush(),
    (e: unknown) => e instanceof ServerUnhealthyError && e.errors.length === 3,
  );
  await client.flush();
});

clientTest(
  "a workgroup size above the device limit is refused at the launch with a ResourceLimitError",
  async (client) => {
    const max = client.properties.hardware.maxUnitsPerCube;
    const big = defineKernel({
      name: "too-wide",
      wgsl: `@compute @workgroup_size(${max}, 2) fn main() {}`,
    });
    const x = client.create(new Uint32Array([1]));
    client.launch(incKernel, [1], [x]);
    assert.throws(() => client.launch(big, [1], []), (e: unknown) => {
      assert.ok(e instanceof ResourceLimitError);
      assert.ok(e.limit === "units" || e.limit === "cube-dim");
      assert.equal(e.kernel, "too-wide");
      return true;
    });
    client.launch(incKernel, [1], [x]);
    await client.flush();
    assert.deepEqual([...await readU32(client, x)], [3], "the launches around the refused one ran");
  },
);

clientTest("launch() rejects bad arguments at once, naming what was wrong", (client) => {
  const x = client.create(new Uint32Array(4));
  const max = client.properties.hardware.maxCubeCount[0];
  assert.throws(() => client.launch(incKernel, [max + 1], [x]), ResourceLimitError);
  assert.throws(() => client.launch(incKernel, [-1], [x]), RangeError);
  assert.throws(() => client.launch(incKernel, [1.5], [x]), RangeError);
  assert.throws(() => client.launch(incKernel, [1], []), /declares 1 bindings/);
  assert.throws(() => client.launch(incKernel, [1], [x, x]), /declares 1 bindings/);
  assert.throws(() => client.launch({} as Kernel, [1], [x]), /defineKernel/);
  assert.throws(() => client.launch(incKernel, [1], [{} as never]), /expected a Handle/);
  assert.throws(() => client.launch(addKernel, [1], [x, x, x], [3] as unknown as Uint32Array), /info must be/);
  const gone = client.empty(4);
  gone.release();
  assert.throws(() => client.launch(incKernel, [1], [gone]), /was released/);
});
