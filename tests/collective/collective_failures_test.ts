/**
 * Contract under test: a failed collective gives a `CollectiveError` to
 * every participant, joined or joining later, names the device at fault,
 * leaves every device usable (later collectives of the same devices run),
 * and never hangs: mismatched calls, unknown devices, a participant that
 * never joins (timeout, AbortSignal), and a device lost or closed before or
 * during the collective. A device that missed a failed round is not left one
 * call behind (it skipped the round, or its call is refused as late), calls
 * over different device sets are a mismatch at once, a device set naming a
 * device twice is refused, and no rejection escapes unhandled.
 */

import assert from "node:assert/strict";
import {
  closeDevices,
  CollectiveError,
  type ComputeClient,
  createClient,
  defineKernel,
  type Handle,
  ServerUnhealthyError,
} from "../../mod.ts";

async function openDevices(n: number): Promise<ComputeClient[]> {
  const out: ComputeClient[] = [];
  for (let i = 0; i < n; i++) out.push(await createClient({ deviceIndex: i }));
  return out;
}

/** Asserts that `p` rejects with a `CollectiveError` of `reason` (and `culprit` when given). */
async function rejectsWith(p: Promise<unknown>, reason: string, culprit?: string): Promise<CollectiveError> {
  let caught: unknown = null;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof CollectiveError, `expected a CollectiveError, got ${caught}`);
  assert.equal(caught.reason, reason, caught.message);
  if (culprit !== undefined) assert.equal(caught.culprit, culprit, caught.message);
  return caught;
}

/** An all-reduce of `[i + 1] * 4` over every client works, so the devices are usable. */
async function stillUsable(clients: readonly ComputeClient[]): Promise<void> {
  const devices = clients.map((c) => c.deviceId.index);
  const hs = clients.map((c, i) => c.create(new Uint32Array(4).fill(i + 1)));
  await Promise.all(clients.map((c, i) => c.allReduce(hs[i]!, hs[i]!, { dtype: "u32", devices })));
  const total = (clients.length * (clients.length + 1)) / 2;
  for (const [i, c] of clients.entries()) {
    assert.deepEqual([...await c.read(hs[i]!, Uint32Array)], [total, total, total, total]);
  }
  hs.forEach((h) => h.release());
}

for (
  const [name, second] of [
    ["sizes", { bytes: 800, dtype: "f32", op: "sum" }],
    ["element types", { bytes: 400, dtype: "i32", op: "sum" }],
    ["reductions", { bytes: 400, dtype: "f32", op: "max" }],
  ] as const
) {
  Deno.test(`mismatched ${name} fail the slot on every participant, and later calls of both devices run`, async () => {
    const clients = await openDevices(2);
    try {
      const a = clients[0]!.create(new Float32Array(100).fill(1));
      const b = clients[1]!.create(new Uint8Array(second.bytes));
      const first = clients[0]!.allReduce(a, a, { dtype: "f32", op: "sum", devices: [0, 1] });
      const other = clients[1]!.allReduce(b, b, { dtype: second.dtype, op: second.op, devices: [0, 1] });
      const e = await rejectsWith(first, "mismatch");
      assert.match(e.message, /every participant must make the same calls/);
      assert.equal(await other.catch((x) => x), e);
      // Each syncCollective reports the failure once.
      await rejectsWith(clients[0]!.syncCollective(), "mismatch");
      await clients[0]!.syncCollective();
      await rejectsWith(clients[1]!.syncCollective(), "mismatch");
      assert.deepEqual([...await clients[0]!.read(a, Float32Array)].slice(0, 2), [1, 1], "dst left as it was");
      await stillUsable(clients);
    } finally {
      await closeDevices();
    }
  });
}

Deno.test("send and recv of different byte counts fail on both sides", async () => {
  const [a, b] = await openDevices(2) as [ComputeClient, ComputeClient];
  try {
    using x = a.create(new Uint32Array([1, 2, 3]));
    using y = b.empty(8);
    const sent = a.send(x, 1);
    await rejectsWith(b.recv(y, 0), "mismatch");
    await rejectsWith(sent, "mismatch");
    await stillUsable([a, b]);
  } finally {
    await closeDevices();
  }
});

Deno.test("bad arguments throw at once, before anything is queued", async () => {
  const clients = await openDevices(3);
  try {
    const [c0, c1, c2] = clients as [ComputeClient, ComputeClient, ComputeClient];
    using h = c0.create(new Float32Array(4));
    using odd = c0.create(new Uint8Array(6));
    using other = c1.create(new Float32Array(4));
    const opts = { dtype: "f32", devices: [0, 1] } as const;
    assert.throws(
      () => c0.allReduce(h, h, { ...opts, devices: [0, 9] }),
      (e: CollectiveError) => e.reason === "unknown-device",
    );
    assert.throws(() => c2.allReduce(h, h, opts), TypeError, "memory of another device");
    using mine = c2.create(new Float32Array(4));
    assert.throws(() => c2.allReduce(mine, mine, opts), (e: CollectiveError) => e.reason === "not-a-participant");
    assert.throws(() => c0.allReduce(h, other, opts), TypeError);
    assert.throws(() => c0.allReduce(h, odd, opts), RangeError);
    assert.throws(() => c0.allReduce(odd, odd, opts), RangeError);
    assert.throws(() => c0.allReduce(h, h, { ...opts, dtype: "f64" as "f32" }), TypeError);
    assert.throws(() => c0.allReduce(h, h, { ...opts, op: "prod" as "sum" }), TypeError);
    assert.throws(() => c0.allReduce(h, h, { ...opts, dtype: "f16", reduceOn: "device" }), TypeError);
    assert.throws(() => c0.allReduce(h, h, { ...opts, timeout: -1 }), RangeError);
    assert.throws(() => c0.send(h, 0), RangeError, "a device cannot copy to itself");
    assert.throws(() => c0.send(h, 7), (e: CollectiveError) => e.reason === "unknown-device");
    // Nothing was queued: every device's next collective is slot 0 of its communicator.
    await Promise.all(clients.map((c) => c.syncCollective()));
    await stillUsable(clients);
  } finally {
    await closeDevices();
  }
});

Deno.test("a participant that never joins times out every joined participant; a late call gets the same error, and later calls run", async () => {
  const clients = await openDevices(3);
  try {
    const hs = clients.map((c) => c.create(new Float32Array(8).fill(1)));
    const devices = [0, 1, 2];
    const waiting = [0, 1].map((i) => clients[i]!.allReduce(hs[i]!, hs[i]!, { dtype: "f32", devices, timeout: 50 }));
    const e = await rejectsWith(waiting[0]!, "timeout", "cpu:2".replace("cpu", clients[2]!.deviceId.kind));
    assert.match(e.message, /did not join within 50 ms/);
    await rejectsWith(waiting[1]!, "timeout");
    // Device 2 comes late: its call joins the failed slot and fails at once.
    await rejectsWith(clients[2]!.allReduce(hs[2]!, hs[2]!, { dtype: "f32", devices }), "timeout");
    await stillUsable(clients);
  } finally {
    await closeDevices();
  }
});

Deno.test("an AbortSignal fails the wait of every participant; an aborted signal fails at the call", async () => {
  const clients = await openDevices(2);
  try {
    const hs = clients.map((c) => c.create(new Int32Array(4)));
    const controller = new AbortController();
    const waiting = clients[0]!.allReduce(hs[0]!, hs[0]!, { dtype: "i32", devices: [0, 1], signal: controller.signal });
    controller.abort(new Error("user gave up"));
    const e = await rejectsWith(waiting, "aborted");
    assert.equal((e.cause as Error).message, "user gave up");
    await rejectsWith(clients[1]!.allReduce(hs[1]!, hs[1]!, { dtype: "i32", devices: [0, 1] }), "aborted");
    const signal = AbortSignal.abort();
    const both = clients.map((c, i) => c.allReduce(hs[i]!, hs[i]!, { dtype: "i32", devices: [0, 1], signal }));
    for (const p of both) await rejectsWith(p, "aborted");
    await stillUsable(clients);
  } finally {
    await closeDevices();
  }
});

Deno.test("closing a device that has not joined fails the others' wait with device-lost, and they stay usable", async () => {
  const clients = await openDevices(3);
  try {
    const hs = clients.map((c) => c.create(new Float32Array(4)));
    const waiting = [0, 1].map((i) => clients[i]!.allReduce(hs[i]!, hs[i]!, { dtype: "f32", devices: [0, 1, 2] }));
    await closeDevices(2);
    const kind = clients[2]!.deviceId.kind;
    for (const p of waiting) await rejectsWith(p, "device-lost", `${kind}:2`);
    assert.throws(
      () => clients[0]!.allReduce(hs[0]!, hs[0]!, { dtype: "f32", devices: [0, 1, 2] }),
      (e: CollectiveError) => e.reason === "unknown-device",
    );
    await stillUsable(clients.slice(0, 2));
  } finally {
    await closeDevices();
  }
});

Deno.test("a device lost while the collective reads its source fails it on every participant; the others stay usable", async () => {
  const clients = await openDevices(3);
  try {
    const hs: Handle[] = clients.map((c) => c.create(new Float32Array(64).fill(2)));
    const devices = [0, 1, 2];
    const all = clients.map((c, i) => c.allReduce(hs[i]!, hs[i]!, { dtype: "f32", devices }));
    clients[1]!.server.device.destroy(); // WebGPU's own loss, after every participant joined
    const kind = clients[1]!.deviceId.kind;
    for (const p of all) await rejectsWith(p, "device-lost", `${kind}:1`);
    assert.deepEqual([...await clients[0]!.read(hs[0]!, Float32Array)].slice(0, 2), [2, 2], "dst left as it was");
    const survivors = [clients[0]!, clients[2]!];
    const pair = survivors.map((c) => c.create(new Uint32Array([c.deviceId.index])));
    await Promise.all(survivors.map((c, i) => c.allReduce(pair[i]!, pair[i]!, { dtype: "u32", devices: [0, 2] })));
    for (const [i, c] of survivors.entries()) assert.deepEqual([...await c.read(pair[i]!, Uint32Array)], [2]);
  } finally {
    await closeDevices();
  }
});

Deno.test("errors queued on a stream before a collective fail it as device-error on every participant, as a read would raise them", async () => {
  const clients = await openDevices(2);
  try {
    const broken = defineKernel({
      name: "broken",
      wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = undefined_name; }`,
    });
    const hs = clients.map((c) => c.create(new Uint32Array([5])));
    clients[0]!.launch(broken, [1], [hs[0]!]);
    const all = clients.map((c, i) => c.allReduce(hs[i]!, hs[i]!, { dtype: "u32", devices: [0, 1] }));
    const kind = clients[0]!.deviceId.kind;
    const e = await rejectsWith(all[0]!, "device-error", `${kind}:0`);
    assert.ok(e.cause instanceof ServerUnhealthyError);
    await rejectsWith(all[1]!, "device-error", `${kind}:0`);
    await clients[0]!.sync(); // the errors were raised once, by the collective
    assert.deepEqual([...await clients[1]!.read(hs[1]!, Uint32Array)], [5]);
    await stillUsable(clients);
  } finally {
    await closeDevices();
  }
});

for (const end of ["closeDevices", "destroy"] as const) {
  Deno.test(`a send and a recv of different byte counts fail on both sides, and ${end} right after raises nothing unhandled`, async () => {
    const [a, b] = await openDevices(2) as [ComputeClient, ComputeClient];
    try {
      const x = a.create(new Uint32Array([1, 2, 3]));
      const y = b.empty(8);
      const sent = a.send(x, 1); // joins first: its source read is under way when the slot fails
      await rejectsWith(b.recv(y, 0), "mismatch");
      await rejectsWith(sent, "mismatch");
      if (end === "destroy") a.destroy();
    } finally {
      await closeDevices();
    }
  });
}

for (const kind of ["send", "allReduce"] as const) {
  Deno.test(`${kind === "send" ? "a send" : "an all-reduce"} whose source read fails while its peer is missing times out, raises nothing unhandled, and both devices stay usable`, async () => {
    const clients = await openDevices(2);
    try {
      const broken = defineKernel({
        name: "broken",
        wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = undefined_name; }`,
      });
      const h = clients[0]!.create(new Uint32Array([5]));
      clients[0]!.launch(broken, [1], [h]); // the collective's read raises the queued errors
      const options = { timeout: 50 };
      const waiting = kind === "send"
        ? clients[0]!.send(h, 1, options)
        : clients[0]!.allReduce(h, h, { dtype: "u32", devices: [0, 1], ...options });
      await rejectsWith(waiting, "timeout", `${clients[1]!.deviceId.kind}:1`);
      await stillUsable(clients);
    } finally {
      await closeDevices();
    }
  });
}

/** Device `i` of `clients` all-reduces `[10 * round + i]` (u32 sum) over every client, calling in `order`. */
async function allReduceRound(clients: readonly ComputeClient[], round: number, order: readonly number[]) {
  const devices = clients.map((c) => c.deviceId.index);
  const hs = clients.map((c, i) => c.create(new Uint32Array([10 * round + i])));
  const calls: Promise<void>[] = [];
  for (const i of order) calls[i] = clients[i]!.allReduce(hs[i]!, hs[i]!, { dtype: "u32", devices, timeout: 1000 });
  await Promise.all(calls);
  const want = clients.reduce((sum, _, i) => sum + 10 * round + i, 0);
  for (const [i, c] of clients.entries()) assert.deepEqual([...await c.read(hs[i]!, Uint32Array)], [want]);
  hs.forEach((h) => h.release());
}

for (const cause of ["timeout", "aborted"] as const) {
  Deno.test(`after an all-reduce fails with ${cause} because a device never called, later all-reduces of the pair run, whichever device calls first`, async () => {
    const clients = await openDevices(2);
    try {
      using h = clients[0]!.create(new Uint32Array([1]));
      const controller = new AbortController();
      const waiting = clients[0]!.allReduce(h, h, {
        dtype: "u32",
        devices: [0, 1],
        timeout: 50,
        signal: controller.signal,
      });
      if (cause === "aborted") controller.abort();
      await rejectsWith(waiting, cause);
      // Device 1 never made the failed call: its next call is the next round's, not a late one.
      await allReduceRound(clients, 1, [0, 1]);
      await allReduceRound(clients, 2, [1, 0]);
      await allReduceRound(clients, 3, [0, 1]);
    } finally {
      await closeDevices();
    }
  });
}

Deno.test("a device that calls an all-reduce after the others timed out gets a CollectiveError saying it came late, then takes part in the next", async () => {
  const clients = await openDevices(3);
  try {
    const hs = clients.map((c, i) => c.create(new Uint32Array([i + 1])));
    const devices = [0, 1, 2];
    const waiting = [0, 1].map((i) => clients[i]!.allReduce(hs[i]!, hs[i]!, { dtype: "u32", devices, timeout: 50 }));
    for (const p of waiting) await rejectsWith(p, "timeout");
    const kind = clients[2]!.deviceId.kind;
    const late = await rejectsWith(
      clients[2]!.allReduce(hs[2]!, hs[2]!, { dtype: "u32", devices }),
      "timeout",
      `${kind}:2`,
    );
    assert.match(late.message, new RegExp(`${kind}:2 called after slot 0 of .* had failed without it`));
    assert.ok(
      late.cause instanceof CollectiveError && late.cause.reason === "timeout",
      "the round's own error is the cause",
    );
    assert.deepEqual([...await clients[2]!.read(hs[2]!, Uint32Array)], [3], "its dst is left as it was");
    await allReduceRound(clients, 1, [2, 0, 1]);
    await allReduceRound(clients, 2, [0, 1, 2]);
  } finally {
    await closeDevices();
  }
});

Deno.test("after a send times out because its receiver never called, the next sends and receives of the pair meet", async () => {
  const [a, b] = await openDevices(2) as [ComputeClient, ComputeClient];
  try {
    using x = a.create(new Uint32Array([7, 8]));
    await rejectsWith(a.send(x, 1, { timeout: 50 }), "timeout");
    for (const round of [1, 2]) {
      using src = a.create(new Uint32Array([round, 10 * round]));
      using dst = b.empty(8);
      const received = b.recv(dst, 0, { timeout: 1000 });
      await Promise.all([a.send(src, 1, { timeout: 1000 }), received]);
      assert.deepEqual([...await b.read(dst, Uint32Array)], [round, 10 * round]);
    }
  } finally {
    await closeDevices();
  }
});

Deno.test("all-reduces over different device sets fail at once with mismatch on every device that called, naming both sets", async () => {
  const clients = await openDevices(3);
  try {
    const [c0, c1, c2] = clients as [ComputeClient, ComputeClient, ComputeClient];
    const kind = c0.deviceId.kind;
    const set = (...ix: number[]) => ix.map((i) => `${kind}:${i}`).join(",");
    const hs = clients.map((c, i) => c.create(new Uint32Array([i + 1])));
    // A timeout long enough that failing by it gives reason timeout, not mismatch.
    const opts = { dtype: "u32", timeout: 1000 } as const;
    // Device 0 names two devices, device 1 three: each waits for the other.
    const pair = [
      c0.allReduce(hs[0]!, hs[0]!, { ...opts, devices: [0, 1] }),
      c1.allReduce(hs[1]!, hs[1]!, { ...opts, devices: [0, 1, 2] }),
    ];
    for (const p of pair) {
      const e = await rejectsWith(p, "mismatch");
      assert.equal(e.culprit, null);
      assert.ok(
        e.message.includes(`over ${set(0, 1)}, waiting`) && e.message.includes(`over ${set(0, 1, 2)}, waiting`),
        e.message,
      );
    }
    // Devices 0 and 1 name all three, device 2 only two of them.
    const three = [
      c0.allReduce(hs[0]!, hs[0]!, { ...opts, devices: [0, 1, 2] }),
      c1.allReduce(hs[1]!, hs[1]!, { ...opts, devices: [0, 1, 2] }),
      c2.allReduce(hs[2]!, hs[2]!, { ...opts, devices: [1, 2] }),
    ];
    for (const p of three) {
      const e = await rejectsWith(p, "mismatch");
      assert.ok(
        e.message.includes(`over ${set(1, 2)}, waiting`) && e.message.includes(`over ${set(0, 1, 2)}, waiting`),
        e.message,
      );
    }
    for (const [i, c] of clients.entries()) assert.deepEqual([...await c.read(hs[i]!, Uint32Array)], [i + 1]);
    await allReduceRound(clients, 1, [0, 1, 2]);
    await allReduceRound([c0, c1], 2, [1, 0]);
    await allReduceRound([c1, c2], 3, [0, 1]);
  } finally {
    await closeDevices();
  }
});

Deno.test("an all-reduce that times out says which other set a missing device waits in, and the devices stay usable", async () => {
  const clients = await openDevices(3);
  try {
    const [c0, c1] = clients as [ComputeClient, ComputeClient];
    const kind = c0.deviceId.kind;
    const hs = clients.map((c, i) => c.create(new Uint32Array([i + 1])));
    // Device 1 may take part in another set first: no mismatch yet, but device 2 never calls.
    const waiting = c0.allReduce(hs[0]!, hs[0]!, { dtype: "u32", devices: [0, 1], timeout: 50 });
    const other = c1.allReduce(hs[1]!, hs[1]!, { dtype: "u32", devices: [1, 2], timeout: 100 });
    const e = await rejectsWith(waiting, "timeout", `${kind}:1`);
    assert.match(e.message, new RegExp(`meanwhile ${kind}:1 waits in allReduce over ${kind}:1,${kind}:2`));
    await rejectsWith(other, "timeout", `${kind}:2`);
    await allReduceRound(clients.slice(0, 2), 1, [1, 0]);
    await allReduceRound(clients.slice(1), 2, [0, 1]);
  } finally {
    await closeDevices();
  }
});

Deno.test("a device set that names a device twice is refused at the call with a RangeError naming it, and nothing is queued", async () => {
  const clients = await openDevices(2);
  try {
    const [c0] = clients as [ComputeClient, ComputeClient];
    const kind = c0.deviceId.kind;
    using h = c0.create(new Uint32Array([4]));
    for (const devices of [[0, 0], [0, 1, 1], [0, { kind, index: 0 }]]) {
      assert.throws(
        () => c0.allReduce(h, h, { dtype: "u32", devices }),
        (e: unknown) =>
          e instanceof RangeError && e.message.includes(`names ${kind}:${devices.length === 3 ? 1 : 0} twice`),
      );
    }
    assert.deepEqual([...await c0.read(h, Uint32Array)], [4]);
    await Promise.all(clients.map((c) => c.syncCollective()));
    await stillUsable(clients);
  } finally {
    await closeDevices();
  }
});
