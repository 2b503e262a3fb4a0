/**
 * Contract under test: memory management on the real adapter, through the
 * client: pool layouts, capacity errors, reports, cleanup, persistent mode,
 * dry runs, tensor groups, staging, churn, and a launch loop that creates no
 * `GPUBuffer` in steady state.
 */

import assert from "node:assert/strict";
import { type ComputeClient, InstallMemoryPoolsError, IoError, PoolConfigError } from "../../mod.ts";
import { addKernel, incKernel, readF32, readU32, rng, withClient } from "../_gpu.ts";
import { clientTest, inProcess, serverStats } from "../_clients.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Counts `createBuffer` calls on the client's device while `fn` runs. */
async function countBuffers(
  client: ComputeClient,
  fn: () => Promise<void> | void,
  created: { staging: number } = { staging: 0 },
): Promise<number> {
  const device = client.server.device;
  const original = device.createBuffer;
  let n = 0;
  device.createBuffer = function (this: GPUDevice, d: GPUBufferDescriptor) {
    n++;
    if ((d.usage & GPUBufferUsage.MAP_READ) !== 0) created.staging++;
    return original.call(this, d);
  };
  try {
    await fn();
  } finally {
    device.createBuffer = original;
  }
  return n;
}

clientTest(
  "36: after releasing every handle, memoryCleanup() brings usage and reservation back to zero",
  async (client) => {
    const hs = [0, 10, 1000, 70_000, 3 * MiB, 40 * MiB].map((n) => client.create(new Uint8Array(n).fill(1)));
    await client.sync();
    assert.equal((await client.memoryUsage()).numberAllocs, 6);
    hs.forEach((h) => h.release());
    assert.equal((await client.memoryUsage()).bytesInUse, 0);
    assert.ok((await client.memoryUsage()).bytesReserved > 0);
    client.memoryCleanup();
    await client.sync();
    assert.deepEqual(await client.memoryUsage(), { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 });
  },
);

clientTest("the default layout routes each size to the first pool that accepts it", async (client) => {
  const sizes = [0, 1000, 10 * MiB, 20 * MiB, 100 * MiB];
  for (const s of sizes) client.empty(s);
  const r = await client.memoryReport();
  const kinds = r.dynamic.map((p) => p.shape.kind);
  assert.equal(kinds[0], "exclusive");
  assert.equal(kinds[kinds.length - 1], "exclusive");
  assert.ok(kinds.slice(1, -1).every((k) => k === "sliced"));
  const accepts = (k: (typeof r.dynamic)[number]["shape"], size: number) =>
    k.kind === "exclusive" ? size <= k.maxAllocSize : k.kind === "sliced"
      ? size <= k.maxSliceSize ||
        (k.maxPoolSize === undefined && k.pageSize >= size && (k.pageSize - size) * 5 < k.pageSize)
      : true;
  const expected = r.dynamic.map(() => 0);
  for (const s of sizes) expected[r.dynamic.findIndex((p) => accepts(p.shape, s))]! += 1;
  assert.deepEqual(r.dynamic.map((p) => p.usage.numberAllocs), expected);
  assert.equal(Math.max(...r.dynamic.map((p) => p.largestAlloc)), 100 * MiB);
});

Deno.test("installMemoryPools() applies a capped layout, refuses while memory is live, and keeps the old cap", async () => {
  await withClient((client) => {
    client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 1 * MiB }] });
    const live = client.empty(1 * MiB);
    assert.throws(
      () => client.empty(1 * MiB),
      (e: unknown) => e instanceof IoError && e.kind === "pool-capacity-exceeded",
    );
    assert.throws(
      () => client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 4 * MiB }] }),
      (e: unknown) => e instanceof InstallMemoryPoolsError && e.kind === "pools-in-use" && e.bytesInUse === 1 * MiB,
    );
    assert.throws(() => client.empty(1 * MiB), IoError, "the old cap still holds");
    live.release();
    client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 4 * MiB }] });
    const four = [0, 1, 2, 3].map(() => client.empty(1 * MiB));
    assert.equal(client.memoryUsage().bytesInUse, 4 * MiB);
    assert.throws(() => client.installMemoryPools({ pools: [] }), PoolConfigError);
    four.forEach((h) => h.release());
    // Streams created later get the last installed layout.
    const other = client.onStream(3);
    other.empty(16);
    assert.equal(other.memoryReport().dynamic[0]!.shape.kind, "sliced");
    assert.equal(other.memoryReport().dynamic.length, 1);
  });
});

Deno.test("installMemoryPools() refused while memory is live leaves the layout of streams created later unchanged", async () => {
  await withClient((client) => {
    client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 4 * MiB }] });
    const live = client.empty(16);
    const refused = { pools: [{ kind: "exclusive" as const, maxAllocSize: 1 * MiB }, { kind: "direct" as const }] };
    assert.throws(
      () => client.installMemoryPools(refused),
      (e: unknown) => e instanceof InstallMemoryPoolsError && e.kind === "pools-in-use",
    );
    const later = client.onStream(5);
    later.empty(16).release();
    const pools = later.memoryReport().dynamic;
    assert.deepEqual(pools.map((p) => p.shape.kind), ["sliced"], "the later stream has the last installed layout");
    live.release();
  });
});

clientTest("persistent allocation mode puts allocations in the persistent pool, and windows nest", async (client) => {
  client.allocationMode("persistent");
  client.allocationMode("persistent");
  client.allocationMode("auto");
  const w = client.create(new Float32Array([1, 2, 3]));
  client.allocationMode("auto");
  const t = client.create(new Float32Array([4, 5, 6]));
  const r = await client.memoryReport();
  assert.equal(r.persistent.usage.numberAllocs, 1);
  assert.equal(r.dynamic.reduce((n, p) => n + p.usage.numberAllocs, 0), 1);
  const out = client.empty(12);
  client.launch(addKernel, [1], [w, t, out], new Uint32Array([3]));
  assert.deepEqual([...await readF32(client, out)], [5, 7, 9]);
});

clientTest("a dry run compiles without dispatching and leaves new pages unmapped until used", async (client) => {
  await client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 64 * KiB }] });
  const out = client.create(new Uint32Array([9, 9, 9]));
  const compiled = (await serverStats(client)).pipelinesCompiled;
  let lazy!: ReturnType<typeof client.empty>;
  await client.dryRun(() => {
    client.launch(incKernel, [1], [out]);
    lazy = client.empty(64 * KiB - 16); // does not fit beside `out`: a fresh page
  });
  let r = (await client.memoryReport()).dynamic[0]!;
  assert.equal(r.pages, 2);
  assert.equal(r.pagesUnmapped, 1);
  assert.equal((await serverStats(client)).pipelinesCompiled, compiled + 1);
  assert.deepEqual([...await readU32(client, out)], [9, 9, 9], "nothing was dispatched");
  await client.read(lazy);
  r = (await client.memoryReport()).dynamic[0]!;
  assert.equal(r.pagesUnmapped, 0, "reading it gave the page memory");
  client.launch(incKernel, [1], [out]);
  assert.deepEqual([...await readU32(client, out)], [10, 10, 10]);
  assert.equal((await serverStats(client)).pipelinesCompiled, compiled + 1, "the dry run's pipeline was reused");
});

clientTest(
  "createTensors() puts a group in one reservation at aligned offsets, each reading back its data",
  async (client) => {
    const align = client.properties.memory.alignment;
    const ts = client.createTensors([
      { descriptor: { shape: [3], elemSize: 4 }, data: new Float32Array([1, 2, 3]) },
      { descriptor: { shape: [2, 2], elemSize: 4 }, data: new Float32Array([4, 5, 6, 7]) },
      { descriptor: { shape: [5], elemSize: 1 }, data: new Uint8Array([8, 9, 10, 11, 12]) },
    ]);
    assert.equal(new Set(ts.map((t) => t.handle.memory)).size, 1, "one reservation");
    assert.deepEqual(ts.map((t) => t.handle.offsetStart % align), [0, 0, 0]);
    assert.deepEqual(ts[1]!.strides, [2, 1]);
    assert.equal((await client.memoryUsage()).numberAllocs, 1);
    const [a, b, c] = await Promise.all(ts.map((t) => client.readTensor(t)));
    assert.deepEqual([...new Float32Array(a!.buffer, a!.byteOffset, 3)], [1, 2, 3]);
    assert.deepEqual([...new Float32Array(b!.buffer, b!.byteOffset, 4)], [4, 5, 6, 7]);
    assert.deepEqual([...c!], [8, 9, 10, 11, 12]);
    await assert.rejects(
      () => client.readTensor({ ...ts[1]!, strides: [1, 2] }),
      (e: unknown) => e instanceof IoError && e.kind === "unsupported-strides",
    );
    ts.forEach((t) => t.handle.release());
    assert.equal((await client.memoryUsage()).numberAllocs, 0);
  },
);

clientTest("staging() lends host memory that write() takes back, detaching the view", async (client) => {
  const h = client.empty(4096);
  for (let round = 0; round < 5; round++) {
    const [view] = client.staging([4096]);
    new Uint32Array(view!.buffer, 0, 1024).fill(round + 1);
    client.write(h, view!);
    assert.equal(view!.byteLength, 0, "the view was moved into the runtime");
  }
  if (inProcess(client)) {
    assert.equal(client.server.hostStaging.created, 1, "one host buffer served every round");
  }
  assert.ok((await readU32(client, h)).every((v) => v === 5));
  assert.throws(() => client.staging([-1]), RangeError);
});

clientTest(
  "createTensors() given one staging view for several tensors writes every tensor, then takes the view back",
  async (client) => {
    const [view] = client.staging([16]);
    new Float32Array(view!.buffer, 0, 4).set([1, 2, 3, 4]);
    const ts = client.createTensors([
      { descriptor: { shape: [4], elemSize: 4 }, data: view! },
      { descriptor: { shape: [2], elemSize: 4 }, data: view!.subarray(8, 16) },
      { descriptor: { shape: [4], elemSize: 4 }, data: view! },
    ]);
    assert.equal(view!.byteLength, 0, "the view was moved into the runtime");
    const got = await Promise.all(
      ts.map(async (t) => [...new Float32Array((await client.readTensor(t)).slice().buffer)]),
    );
    assert.deepEqual(got, [[1, 2, 3, 4], [3, 4], [1, 2, 3, 4]]);
    ts.forEach((t) => t.handle.release());
    assert.equal((await client.memoryUsage()).numberAllocs, 0);
  },
);

clientTest(
  "churn: 10,000 mixed-size allocate/release cycles end within 1.25x of the peak bytes in use",
  async (client) => {
    const r = rng(1);
    const live: { h: ReturnType<typeof client.empty>; size: number }[] = [];
    let inUse = 0;
    let peak = 0;
    for (let i = 0; i < 10_000; i++) {
      const size = Math.round(Math.exp(Math.log(1 * KiB) + r() * Math.log(1024)));
      const h = client.empty(size);
      if (i % 500 === 0) client.write(h, new Uint8Array(size).fill(i & 255));
      live.push({ h, size });
      inUse += size;
      peak = Math.max(peak, inUse);
      while (live.length > 1000 * (0.5 + r())) {
        const [x] = live.splice(Math.floor(r() * live.length), 1);
        x!.h.release();
        inUse -= x!.size;
      }
    }
    const usage = await client.memoryUsage();
    assert.equal(usage.bytesInUse, inUse);
    assert.ok(usage.bytesReserved <= 1.25 * peak, `reserved ${usage.bytesReserved} B vs peak in use ${peak} B`);
    live.forEach((x) => x.h.release());
    client.memoryCleanup();
    await client.sync();
    assert.equal((await client.memoryUsage()).bytesReserved, 0);
  },
);

Deno.test("a launch loop whose temporaries come from the pools creates no GPUBuffer in steady state", async () => {
  await withClient(async (client) => {
    const n = 1024;
    const a = client.create(new Float32Array(n).fill(1));
    const b = client.create(new Float32Array(n).fill(2));
    const info = new Uint32Array([n]);
    const step = async () => {
      for (let i = 0; i < 50; i++) {
        const tmp = client.empty(n * 4);
        const out = client.empty(n * 4);
        client.launch(addKernel, [n / 64], [a, b, tmp], info);
        client.launch(addKernel, [n / 64], [tmp, b, out], info);
        tmp.release();
        out.release();
      }
      const last = client.empty(n * 4);
      client.launch(addKernel, [n / 64], [a, a, last], info);
      assert.equal((await readF32(client, last))[n - 1], 2);
      last.release();
    };
    await step(); // warm-up: pages, staging, arena, pipelines, bind groups
    const reads = { staging: 0 };
    const created = await countBuffers(client, async () => {
      for (let k = 0; k < 3; k++) await step();
    }, reads);
    if (client.fastReads) {
      // Fast reads leave each staging buffer resting until its leftover map settles, and prime more while one
      // rests (by design, bounded per size class): the pools' pages and everything else stay at zero.
      assert.equal(created - reads.staging, 0);
      assert.ok(reads.staging <= 16, `${reads.staging} staging buffers primed`);
    } else {
      assert.equal(created, 0);
    }
  });
});

Deno.test("a GPUBuffer freed while unsubmitted work uses it is destroyed only after that submit", async () => {
  await withClient(async (client) => {
    client.installMemoryPools({ pools: [{ kind: "exclusive", maxAllocSize: 1 * MiB }] });
    const x = client.create(new Uint32Array(64));
    const out = client.create(new Uint32Array(64));
    await client.sync();
    const stream = client.server.stream(0);
    client.launch(addKernel, [1], [x, x, out], new Uint32Array([64]));
    client.launch(incKernel, [1], [x]); // queued, not submitted: x's page is in use
    x.release();
    stream.memory.cleanup(true); // frees x's page in the pool
    assert.equal(stream.storage.liveBuffers, 2, "the buffer is kept while the encoder references it");
    await client.flush(); // submits; no validation error about a destroyed buffer
    assert.equal(stream.storage.liveBuffers, 1, "destroyed right after the submit");
    assert.equal((await readF32(client, out)).length, 64);
  });
});
