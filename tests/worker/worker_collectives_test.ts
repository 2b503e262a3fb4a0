/**
 * Worker clients across devices: each holds a logical device of this
 * thread's directory, takes part in all-reduces, sends and receives with
 * other worker clients and with main-thread clients (reducing on the host),
 * and is listed and closed with the others. Their failures behave as the
 * main-thread clients' do (tests/collective/collective_failures_test.ts).
 */

import assert from "node:assert/strict";
import { closeDevices, CollectiveError, createClient, listDevices, WorkerClient } from "../../mod.ts";
import type { ComputeClient, Transport } from "../../mod.ts";
import { sharedBuffers } from "../../src/worker/link/shared_buffers.ts";

/** Sums of `n` sources of `len` f32 each, source i holding i + 0.5·j at j, rounded to f32 after each addition. */
function expectedSums(n: number, len: number): number[] {
  return Array.from({ length: len }, (_, j) => {
    const acc = new Float32Array(1);
    for (let i = 0; i < n; i++) acc[0] = acc[0]! + Math.fround(i + 0.5 * j);
    return acc[0]!;
  });
}

Deno.test("two worker clients and a main-thread client all-reduce into every device's buffer", async () => {
  const w0 = await createClient({ worker: true, deviceIndex: 0 });
  const w1 = await createClient({ worker: true, deviceIndex: 1 });
  const m2 = await createClient({ deviceIndex: 2 });
  try {
    assert.deepEqual([w0.deviceId.index, w1.deviceId.index, m2.deviceId.index], [0, 1, 2]);
    const clients = [w0, w1, m2];
    const len = 1000;
    const xs = clients.map((c, i) => c.create(Float32Array.from({ length: len }, (_, j) => i + 0.5 * j)));
    clients.forEach((c, i) => void c.allReduce(xs[i]!, xs[i]!, { dtype: "f32", devices: [0, 1, 2], reduceOn: "host" }));
    await Promise.all(clients.map((c) => c.syncCollective()));
    const want = expectedSums(3, len);
    for (const [i, c] of clients.entries()) {
      assert.deepEqual([...await c.read(xs[i]!, Float32Array)], want, `device ${i}`);
    }
  } finally {
    await closeDevices();
    await Promise.all([w0.ended, w1.ended]);
  }
});

Deno.test("three worker clients split a large all-reduce between their threads and every element matches the CPU", async () => {
  const clients = await Promise.all([0, 1, 2].map((i) => createClient({ worker: true, deviceIndex: i })));
  try {
    const len = 300_001; // 1.2 MB of f32: read into shared memory, reduced 1/3 per worker (the last share shorter)
    const xs = clients.map((c, i) => c.create(Float32Array.from({ length: len }, (_, j) => i + 0.5 * (j % 1000))));
    const ms = clients.map((c, i) => c.create(Int32Array.from({ length: len }, (_, j) => (i - 1) * (j % 7) - 3)));
    clients.forEach((c, i) => {
      c.allReduce(xs[i]!, xs[i]!, { dtype: "f32", devices: [0, 1, 2] });
      c.allReduce(ms[i]!, ms[i]!, { dtype: "i32", op: "mean", devices: [0, 1, 2] });
    });
    await Promise.all(clients.map((c) => c.syncCollective()));
    const sums = expectedSums(3, 1000);
    const means = Array.from(
      { length: len },
      (_, j) => Math.trunc([0, 1, 2].reduce((a, i) => a + (i - 1) * (j % 7) - 3, 0) / 3),
    );
    for (const [i, c] of clients.entries()) {
      const got = await c.read(xs[i]!, Float32Array);
      assert.equal(got.length, len);
      for (let j = 0; j < len; j++) {
        if (got[j] !== sums[j % 1000]) assert.fail(`device ${i}, f32 element ${j}: ${got[j]}`);
      }
      const mean = await c.read(ms[i]!, Int32Array);
      for (let j = 0; j < len; j++) if (mean[j] !== means[j]) assert.fail(`device ${i}, i32 element ${j}: ${mean[j]}`);
    }
  } finally {
    await closeDevices();
    await Promise.all(clients.map((c) => c.ended));
  }
});

Deno.test("back-to-back large all-reduces among worker clients reuse their shared memory, and every result matches the CPU", async () => {
  const clients = await Promise.all([0, 1, 2].map((i) => createClient({ worker: true, deviceIndex: i })));
  try {
    const len = 100_000; // 400 KB: read into pooled shared memory
    const rounds = 4;
    // Round k, device i: i + 10k + (j % 11). Each round's reads may take the memory the previous round's result
    // is still being written from, unless that memory is held until the workers ran those writes.
    const value = (k: number, i: number, j: number) => i + 10 * k + (j % 11);
    const srcs = clients.map((c, i) =>
      Array.from({ length: rounds }, (_, k) => c.create(Float32Array.from({ length: len }, (_, j) => value(k, i, j))))
    );
    const dsts = clients.map((c) => Array.from({ length: rounds }, () => c.empty(len * 4)));
    assert.equal(sharedBuffers.freeBytes, 0);
    for (let k = 0; k < rounds; k++) {
      // Each round starts once the previous one's results are queued for writing, not yet written.
      await Promise.all(
        clients.map((c, i) => c.allReduce(srcs[i]![k]!, dsts[i]![k]!, { dtype: "f32", devices: [0, 1, 2] })),
      );
      if (k === 0) {
        // The sources of ranks 1 and 2 are free again; rank 0's holds the result until every worker wrote it.
        assert.equal(sharedBuffers.freeBytes, 2 * len * 4, "the result's memory stays held until the writes ran");
      }
    }
    await Promise.all(clients.map((c) => c.syncCollective()));
    await Promise.all(clients.map((c) => c.sync()));
    for (const [i, c] of clients.entries()) {
      for (let k = 0; k < rounds; k++) {
        const got = await c.read(dsts[i]![k]!, Float32Array);
        for (let j = 0; j < len; j++) {
          const want = value(k, 0, j) + value(k, 1, j) + value(k, 2, j);
          if (got[j] !== want) assert.fail(`device ${i}, round ${k}, element ${j}: ${got[j]}, want ${want}`);
        }
      }
    }
    // Once every write ran, the sources' memory waits for the next all-reduce of their size.
    const pooled = sharedBuffers.freeBytes;
    assert.ok(pooled >= 3 * len * 4 && pooled <= rounds * 3 * len * 4, `${pooled} B pooled`);
    clients.forEach((c, i) => void c.allReduce(dsts[i]![0]!, dsts[i]![0]!, { dtype: "f32", devices: [0, 1, 2] }));
    await Promise.all(clients.map((c) => c.syncCollective()));
    await Promise.all(clients.map((c) => c.sync()));
    assert.equal(sharedBuffers.freeBytes, pooled, "the next all-reduce of that size took pooled memory");
    const again = await clients[1]!.read(dsts[1]![0]!, Float32Array);
    assert.equal(again[5], 3 * (value(0, 0, 5) + value(0, 1, 5) + value(0, 2, 5)));
  } finally {
    await closeDevices();
    await Promise.all(clients.map((c) => c.ended));
  }
  assert.equal(sharedBuffers.freeBytes, 0, "closing the last worker device lets the pooled memory go");
});

Deno.test("a large all-reduce mixing worker and main-thread clients reduces on this thread and writes every device", async () => {
  const w0 = await createClient({ worker: true, deviceIndex: 0 });
  const m1 = await createClient({ deviceIndex: 1 });
  try {
    const len = 100_000;
    const xs = [w0, m1].map((c, i) => c.create(Uint32Array.from({ length: len }, (_, j) => j + i * 1_000_000)));
    [w0, m1].forEach((c, i) => void c.allReduce(xs[i]!, xs[i]!, { dtype: "u32", op: "max", devices: [0, 1] }));
    await Promise.all([w0.syncCollective(), m1.syncCollective()]);
    for (const [i, c] of [w0, m1].entries()) {
      const got = await c.read(xs[i]!, Uint32Array);
      for (let j = 0; j < len; j++) if (got[j] !== j + 1_000_000) assert.fail(`device ${i}, element ${j}: ${got[j]}`);
    }
  } finally {
    await closeDevices();
    await w0.ended;
  }
});

Deno.test("a mixed group with auto reduces on the host even where a main-thread client alone would pick its device", async () => {
  const w0 = await createClient({ worker: true, deviceIndex: 0 });
  const m1 = await createClient({ deviceIndex: 1 });
  try {
    // 4 MiB per participant: the size from which auto measures both sites (host first, then device). The
    // main-thread client joins each slot first, so its choice would fix the site; rank 0, a worker, has no device
    // reduction.
    const len = (4 << 20) / 4;
    for (let round = 0; round < 3; round++) {
      const big = [w0, m1].map((c, i) => c.create(new Float32Array(len).fill(i + 1 + round)));
      const calls = [
        m1.allReduce(big[1]!, big[1]!, { dtype: "f32", devices: [0, 1] }),
        w0.allReduce(big[0]!, big[0]!, { dtype: "f32", devices: [0, 1] }),
      ];
      await Promise.all(calls);
      for (const [i, c] of [w0, m1].entries()) {
        const got = await c.read(big[i]!, Float32Array);
        const want = 2 * round + 3;
        if (got[0] !== want || got[len - 1] !== want) {
          assert.fail(`round ${round}, device ${i}: ${got[0]}, want ${want}`);
        }
      }
    }
  } finally {
    await closeDevices();
    await w0.ended;
  }
});

Deno.test("worker clients' all-reduce with auto reduces on the host; work launched after the sync sees the result", async () => {
  const a = await createClient({ worker: true, deviceIndex: 0 });
  const b = await createClient({ worker: true, deviceIndex: 1 });
  try {
    const xa = a.create(new Int32Array([1, -2, 3]));
    const xb = b.create(new Int32Array([10, 20, -30]));
    const ya = a.empty(12);
    a.allReduce(xa, ya, { dtype: "i32", op: "max", devices: [1, 0] });
    b.allReduce(xb, xb, { dtype: "i32", op: "max", devices: [0, 1] });
    await Promise.all([a.syncCollective(), b.syncCollective()]);
    assert.deepEqual([...await a.read(ya, Int32Array)], [10, 20, 3]);
    assert.deepEqual([...await b.read(xb, Int32Array)], [10, 20, 3]);
    assert.deepEqual([...await a.read(xa, Int32Array)], [1, -2, 3], "src is left as it was");
  } finally {
    await closeDevices();
    await Promise.all([a.ended, b.ended]);
  }
});

Deno.test("send, recv and toClient move bytes between worker and main-thread clients", async () => {
  const w = await createClient({ worker: true, deviceIndex: 0 });
  const m = await createClient({ deviceIndex: 1 });
  try {
    using src = w.create(new Uint32Array([1, 2, 3, 4]));
    using dst = m.empty(16);
    const sent = w.send(src, 1);
    const received = m.recv(dst, 0);
    await Promise.all([sent, received]);
    assert.deepEqual([...await m.read(dst, Uint32Array)], [1, 2, 3, 4]);
    using back = await m.toClient(dst, w);
    assert.deepEqual([...await w.read(back, Uint32Array)], [1, 2, 3, 4]);
    using there = await w.toClient(src, m);
    assert.deepEqual([...await m.read(there, Uint32Array)], [1, 2, 3, 4]);
  } finally {
    await closeDevices();
    await w.ended;
  }
});

Deno.test("a worker client refuses reduceOn device at the call, and unknown devices at once", async () => {
  const a = await createClient({ worker: true, deviceIndex: 0 });
  try {
    using x = a.create(new Float32Array(4));
    assert.throws(
      () => a.allReduce(x, x, { dtype: "f32", devices: [0], reduceOn: "device" }),
      /allReduce: a worker client's collectives reduce on the host/,
    );
    assert.throws(() => a.allReduce(x, x, { dtype: "f32", devices: [0, 7] }), CollectiveError);
    assert.deepEqual([...await a.read(x, Float32Array)], [0, 0, 0, 0], "the client stays usable");
  } finally {
    a.destroy();
    await a.ended;
  }
});

Deno.test("worker devices are listed, reused by index, refused on a main-thread index, and closed by closeDevices", async () => {
  const _m = await createClient({ deviceIndex: 0 });
  const w = await createClient({ worker: true, deviceIndex: 1 });
  try {
    assert.deepEqual(listDevices().map((d) => d.index), [0, 1]);
    const again = await createClient({ worker: true, deviceIndex: 1 });
    assert.ok(again instanceof WorkerClient);
    assert.equal(again.connection, w.connection, "a later request gets a client of the same worker");
    await assert.rejects(createClient({ worker: true, deviceIndex: 0 }), /device 0 is open on this thread/);
    await closeDevices(1);
    await w.ended;
    assert.deepEqual(listDevices().map((d) => d.index), [0]);
    assert.throws(() => w.empty(4), /destroyed|lost/i);
  } finally {
    await closeDevices();
  }
});

/** Asserts that `p` rejects with a `CollectiveError` of `reason`, and returns it. */
async function rejectsWith(p: Promise<unknown>, reason: string): Promise<CollectiveError> {
  const e = await p.then(() => null, (x) => x);
  assert.ok(e instanceof CollectiveError, `expected a CollectiveError, got ${e}`);
  assert.equal(e.reason, reason, e.message);
  return e;
}

/** Client `i` all-reduces `[10 * round + i]` (u32 sum) over every client's device, calling in `order`. */
async function allReduceRound(clients: readonly ComputeClient<Transport>[], round: number, order: readonly number[]) {
  const devices = clients.map((c) => c.deviceId.index);
  const hs = clients.map((c, i) => c.create(new Uint32Array([10 * round + i])));
  const calls: Promise<void>[] = [];
  for (const i of order) calls[i] = clients[i]!.allReduce(hs[i]!, hs[i]!, { dtype: "u32", devices, timeout: 1000 });
  await Promise.all(calls);
  const want = clients.reduce((sum, _, i) => sum + 10 * round + i, 0);
  for (const [i, c] of clients.entries()) assert.deepEqual([...await c.read(hs[i]!, Uint32Array)], [want]);
  hs.forEach((h) => h.release());
}

Deno.test("a worker client's send and a worker client's recv of different byte counts fail on both sides, and closing the devices right after raises nothing unhandled", async () => {
  const a = await createClient({ worker: true, deviceIndex: 0 });
  const b = await createClient({ worker: true, deviceIndex: 1 });
  try {
    const x = a.create(new Uint32Array([1, 2, 3]));
    const y = b.empty(8);
    const sent = a.send(x, 1); // joins first: its source read through the ring is under way when the slot fails
    await rejectsWith(b.recv(y, 0), "mismatch");
    await rejectsWith(sent, "mismatch");
  } finally {
    await closeDevices();
    await Promise.all([a.ended, b.ended]);
  }
});

Deno.test("worker clients: after an all-reduce times out, a device that never called joins the next round, and one that calls late is told so, then joins the next", async () => {
  const clients = await Promise.all([0, 1].map((i) => createClient({ worker: true, deviceIndex: i })));
  try {
    const [w0, w1] = clients as [WorkerClient, WorkerClient];
    using h0 = w0.create(new Uint32Array([1]));
    using h1 = w1.create(new Uint32Array([2]));
    await rejectsWith(w0.allReduce(h0, h0, { dtype: "u32", devices: [0, 1], timeout: 50 }), "timeout");
    await allReduceRound(clients, 1, [1, 0]); // device 1 never made the failed call
    await rejectsWith(w1.allReduce(h1, h1, { dtype: "u32", devices: [0, 1], timeout: 50 }), "timeout");
    const late = await rejectsWith(w0.allReduce(h0, h0, { dtype: "u32", devices: [0, 1] }), "timeout");
    assert.match(late.message, /called after slot 2 of .* had failed without it/);
    await allReduceRound(clients, 2, [0, 1]);
  } finally {
    await closeDevices();
    await Promise.all(clients.map((c) => c.ended));
  }
});

Deno.test("worker clients: all-reduces over different device sets fail at once with mismatch naming both sets, and a set naming a device twice is refused at the call", async () => {
  const w0 = await createClient({ worker: true, deviceIndex: 0 });
  const w1 = await createClient({ worker: true, deviceIndex: 1 });
  const m2 = await createClient({ deviceIndex: 2 });
  try {
    const clients = [w0, w1, m2];
    const hs = clients.map((c, i) => c.create(new Uint32Array([i + 1])));
    const calls = [
      w0.allReduce(hs[0]!, hs[0]!, { dtype: "u32", devices: [0, 1], timeout: 1000 }),
      w1.allReduce(hs[1]!, hs[1]!, { dtype: "u32", devices: [0, 1, 2], timeout: 1000 }),
    ];
    const kind = w0.deviceId.kind;
    const set = (...ix: number[]) => ix.map((i) => `${kind}:${i}`).join(",");
    for (const p of calls) {
      const e = await rejectsWith(p, "mismatch");
      assert.ok(e.message.includes(`over ${set(0, 1)}, waiting`), e.message);
      assert.ok(e.message.includes(`over ${set(0, 1, 2)}, waiting`), e.message);
    }
    assert.throws(() => w1.allReduce(hs[1]!, hs[1]!, { dtype: "u32", devices: [1, 0, 1] }), RangeError, "names");
    assert.deepEqual([...await w1.read(hs[1]!, Uint32Array)], [2], "nothing was queued");
    await allReduceRound(clients, 1, [2, 1, 0]);
    await allReduceRound([w0, w1], 2, [0, 1]);
  } finally {
    await closeDevices();
    await Promise.all([w0.ended, w1.ended]);
  }
});
