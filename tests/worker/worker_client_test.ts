/**
 * Contract under test: what only a worker client has. Its lifecycle (the
 * Worker ends after destroy, pending calls reject with `DeviceLostError`,
 * device loss in the worker reaches the main thread), its options, the ring
 * under load (spilled launches still run, in order), kernels sent once,
 * errors found only in the worker (a pool at capacity) raised at the next
 * draining call, its asynchronous and refused methods, and several worker
 * clients at once. The shared suite (`clientTest`) covers everything both
 * clients do alike.
 */

import assert from "node:assert/strict";
import {
  createClient,
  defineKernel,
  DeviceLostError,
  InstallMemoryPoolsError,
  IoError,
  PoolConfigError,
  ServerUnhealthyError,
  UnsupportedError,
  WorkerClient,
} from "../../mod.ts";
import { affineKernel, incKernel, readU32 } from "../_gpu.ts";

const MiB = 1024 * 1024;

/** x[i] = x[i] * 3 + info[0]: the order of launches with different info words shows in the result. */
const mulAdd = defineKernel({
  name: "mul-add",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read> c: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] * 3u + c; }
}`,
});

/** Ends a worker client and waits for its Worker. */
async function end(client: WorkerClient): Promise<void> {
  client.destroy();
  await client.ended;
}

Deno.test("`using` a worker client destroys its device and ends its Worker; later calls throw DeviceLostError", async () => {
  let kept!: WorkerClient;
  {
    using client = await createClient({ worker: true });
    kept = client;
    client.launch(incKernel, [1], [client.create(new Uint32Array(4))]);
  }
  await kept.ended;
  assert.throws(() => kept.empty(4), (e: unknown) => e instanceof DeviceLostError && e.reason === "destroyed");
  await assert.rejects(kept.flush(), DeviceLostError);
  kept.destroy(); // twice is a no-op
});

Deno.test("`await using` a worker client waits for its queued work, then ends the Worker", async () => {
  let kept!: WorkerClient;
  let x!: ReturnType<WorkerClient["empty"]>;
  const events: string[] = [];
  {
    await using client = await createClient({ worker: true });
    kept = client;
    const sync = client.sync.bind(client);
    client.sync = async () => {
      events.push("sync");
      await sync();
      events.push("synced");
    };
    x = client.create(new Uint32Array(64));
    for (let i = 0; i < 10; i++) client.launch(incKernel, [1], [x]);
  }
  assert.deepEqual(events, ["sync", "synced"]);
  assert.equal(kept.connection.closed, true);
  await kept.ended; // already resolved
});

Deno.test("destroy() with a read in flight rejects it with DeviceLostError, and the Worker still ends", async () => {
  const client = await createClient({ worker: true });
  const x = client.create(new Uint32Array(1 << 16));
  for (let i = 0; i < 20; i++) client.launch(incKernel, [1024], [x]);
  const read = client.read(x);
  client.destroy();
  await assert.rejects(read, (e: unknown) => e instanceof DeviceLostError && e.reason === "destroyed");
  await client.ended;
});

Deno.test("a device lost in the worker rejects the main thread's pending calls and every later one", async () => {
  const client = await createClient({ worker: true });
  const x = client.create(new Uint32Array(64));
  client.launch(incKernel, [1], [x]);
  assert.deepEqual([...(await readU32(client, x)).slice(0, 2)], [1, 1]);
  const lost = client.connection.call({ method: "simulateLoss" });
  const pending = client.read(x);
  await assert.rejects(pending, DeviceLostError);
  await lost.catch(() => {}); // its reply may race the loss notice
  await client.ended; // the worker ended itself: nothing is left to destroy
  assert.throws(() => client.launch(incKernel, [1], [x]), DeviceLostError);
  await assert.rejects(client.sync(), DeviceLostError);
  client.destroy();
});

Deno.test("createClient({ worker: true }) refuses a device, non-boolean worker values and options the Worker cannot receive", async () => {
  const adapter = (await navigator.gpu.requestAdapter())!;
  const device = await adapter.requestDevice();
  try {
    await assert.rejects(
      () => createClient({ worker: true, device } as never),
      (e: unknown) => e instanceof TypeError && /cannot cross to the Worker/.test(e.message),
    );
  } finally {
    device.destroy();
  }
  await assert.rejects(() => createClient({ worker: "yes" } as never), /worker must be a boolean/);
  await assert.rejects(
    () => createClient({ worker: true, logger: { sink: { file: () => "x" } } } as never),
    (e: unknown) => e instanceof TypeError && /plain data/.test(e.message),
  );
  // Options the server refuses are refused from the worker, as the same errors.
  await assert.rejects(() => createClient({ worker: true, tasksMax: 0 }), (e: unknown) => e instanceof RangeError);
  await assert.rejects(() => createClient({ worker: true, memory: "huge" as never }), PoolConfigError);
});

Deno.test("launches that overflow a small ring spill on the main thread and still run in order", async () => {
  // Three rounds: the hand-over between a spilling writer and a reader that empties the ring is a race.
  for (let round = 0; round < 3; round++) {
    const client = await WorkerClient.start({}, 0, { ringSlots: 64 });
    try {
      const n = 256;
      const x = client.create(new Uint32Array(n));
      let want = 0;
      for (let i = 0; i < 3000; i++) {
        const c = (i * 2654435761 + round) >>> 0;
        client.launch(mulAdd, [n / 64], [x], new Uint32Array([c]));
        want = (Math.imul(want, 3) + c) >>> 0;
      }
      assert.ok(client.connection.ring.spillCount > 0, "the ring was full at least once");
      const got = await readU32(client, x);
      assert.ok(got.every((v) => v === want), `expected ${want} everywhere, got ${got[0]}`);
      assert.equal(client.connection.ring.spilled, 0, "everything spilled went back through the ring");
    } finally {
      await end(client);
    }
  }
});

Deno.test("a read settles while the main thread keeps the worker busy with launches", async () => {
  // The worker drains its ring in time slices; a turn between slices that never made its event loop wait left the
  // read's map (Deno's 10 ms sleep) unseen for as long as launches kept coming: it never settled in 3 s.
  const client = await createClient({ worker: true });
  try {
    const x = client.create(new Uint32Array(64));
    const y = client.create(new Uint32Array(64).fill(7));
    await client.read(x);
    let settled = false;
    const read = client.read(y, Uint32Array).then((v) => {
      settled = true;
      return v;
    });
    read.catch(() => {}); // if it never settles, the destroy below rejects it: the assertion says why
    // A message to itself lets the reply in between bursts without the main thread ever pausing.
    const turn = () =>
      new Promise<void>((r) => {
        const c = new MessageChannel();
        c.port1.onmessage = () => {
          c.port1.close();
          r();
        };
        c.port2.postMessage(null);
      });
    const start = performance.now();
    let launches = 0;
    while (!settled && performance.now() - start < 2_000) {
      for (let i = 0; i < 50; i++, launches++) client.launch(incKernel, [1], [x]);
      await turn();
    }
    assert.ok(settled, `the read did not settle in 2 s while ${launches} launches streamed`);
    assert.deepEqual([...await read], new Array(64).fill(7));
    assert.equal((await client.read(x, Uint32Array))[0], launches);
  } finally {
    await end(client);
  }
});

Deno.test("a kernel is sent to the worker once, however often and from however many streams it is launched", async () => {
  const client = await createClient({ worker: true });
  try {
    const other = client.onStream(3);
    const a = client.create(new Uint32Array(64));
    const b = other.create(new Uint32Array(64));
    for (let i = 0; i < 200; i++) {
      client.launch(incKernel, [1], [a]);
      other.launch(incKernel, [1], [b]);
      other.launch(affineKernel, [1], [b, b], new Uint32Array([64, 1, 0]));
    }
    assert.equal(client.connection.kernelsSent, 2);
    assert.ok((await readU32(client, a)).every((v) => v === 200));
    assert.ok((await readU32(client, b)).every((v) => v === 200), "a read on stream 0 sees stream 3's launches");
  } finally {
    await end(client);
  }
});

Deno.test("a pool at capacity fails an allocation at the next flush, and the handle's launches queue not-found", async () => {
  const client = await createClient({ worker: true });
  try {
    await client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 1 * MiB }] });
    const live = client.empty(1 * MiB);
    const over = client.empty(1 * MiB); // refused in the worker
    client.launch(incKernel, [1], [over]);
    await assert.rejects(client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      assert.ok(e.errors[0] instanceof IoError && e.errors[0].kind === "pool-capacity-exceeded");
      assert.ok(e.errors[1] instanceof IoError && e.errors[1].kind === "not-found");
      assert.match(e.errors[1].message, new RegExp(`memory ${over.memory.id}`));
      return true;
    });
    await assert.rejects(
      client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 4 * MiB }] }),
      (e: unknown) => e instanceof InstallMemoryPoolsError && e.kind === "pools-in-use" && e.bytesInUse === 1 * MiB,
    );
    assert.throws(() => client.installMemoryPools({ pools: [] }), PoolConfigError, "a bad layout throws at the call");
    live.release();
    over.release();
    await client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: 1 * MiB, maxPoolSize: 4 * MiB }] });
    const four = [0, 1, 2, 3].map(() => client.empty(1 * MiB));
    assert.equal((await client.memoryUsage()).bytesInUse, 4 * MiB);
    await client.flush();
    four.forEach((h) => h.release());
  } finally {
    await end(client);
  }
});

Deno.test("getResource() is refused, naming why; memory reports are promises", async () => {
  const client = await createClient({ worker: true });
  try {
    using h = client.create(new Uint32Array(4));
    assert.throws(
      () => client.getResource(h),
      (e: unknown) => e instanceof UnsupportedError && /cross threads/.test(e.message),
    );
    const usage = client.memoryUsage();
    assert.ok(usage instanceof Promise);
    assert.equal((await usage).numberAllocs, 1);
    assert.equal((await client.memoryReport()).dynamic.reduce((n, p) => n + p.usage.numberAllocs, 0), 1);
  } finally {
    await end(client);
  }
});

Deno.test("several worker clients run at once, one device each, and ending one leaves the others working", async () => {
  const clients = await Promise.all([0, 1, 2].map(() => createClient({ worker: true })));
  try {
    const xs = clients.map((c, k) => c.create(new Uint32Array(1024).fill(k)));
    clients.forEach((c, k) => {
      for (let i = 0; i < 50 * (k + 1); i++) c.launch(incKernel, [16], [xs[k]!]);
    });
    const got = await Promise.all(clients.map((c, k) => readU32(c, xs[k]!)));
    got.forEach((g, k) => assert.ok(g.every((v) => v === k + 50 * (k + 1)), `client ${k}`));
    await end(clients[1]!);
    clients[0]!.launch(incKernel, [16], [xs[0]!]);
    clients[2]!.launch(incKernel, [16], [xs[2]!]);
    assert.equal((await readU32(clients[0]!, xs[0]!))[0], 51);
    assert.equal((await readU32(clients[2]!, xs[2]!))[0], 2 + 151);
  } finally {
    for (const c of clients) await end(c);
  }
});

/** Start/destroy cycles of the test below (`WORKER_CYCLES=200` for the full count). */
function cycles(): number {
  const granted = Deno.permissions.querySync?.({ name: "env", variable: "WORKER_CYCLES" }).state === "granted";
  return Number((granted ? Deno.env.get("WORKER_CYCLES") : undefined) ?? 8);
}

Deno.test("start/destroy cycles with work in flight end every Worker and leave nothing pending", async () => {
  for (let i = 0; i < cycles(); i++) {
    const client = await createClient({ worker: true });
    const x = client.create(new Uint32Array(4096));
    for (let k = 0; k < 100; k++) client.launch(incKernel, [64], [x]);
    const read = client.read(x).then(() => "read", (e) => (e instanceof DeviceLostError ? "lost" : String(e)));
    if (i % 2 === 1) await client.flush(); // half the cycles destroy with the work submitted, half before
    client.destroy();
    assert.equal(await read, "lost", `cycle ${i}`);
    await client.ended;
  }
});
