/**
 * Contract under test: `read`, `readMany`, `readTensor` and `sync` take an
 * `AbortSignal`. An abort abandons the wait only: the promise rejects with
 * the signal's reason, the call issued runs on in order, queued work still
 * runs, and the client stays usable. A signal already aborted rejects at once
 * and issues nothing. Queued errors an abandoned call drains are raised once,
 * by the next draining call of the stream. Listeners never pile up, and an
 * abandoned call that fails later leaves no unhandled rejection.
 */

import assert from "node:assert/strict";
import { CompilationError, type ComputeClient, defineKernel, type Handle, ServerUnhealthyError } from "../../mod.ts";
import type { Kernel, Transport } from "../../mod.ts";
import { quiet } from "../../src/client/_waits.ts";
import { clientTest } from "../_clients.ts";
import { macrotask } from "../_gpu.ts";
import { defineLoopKernel, launchWithinBudget } from "../_loop_budget.ts";

/** Steps every element `steps` (info word 0) times through a 32-bit LCG: real work, in place, composable. */
const steps = defineLoopKernel({
  name: "lcg-steps",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read> steps: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var acc = x[g.x];
  for (var i = 0u; i < steps; i++) { acc = acc * 1664525u + 1013904223u; }
  x[g.x] = acc;
}`,
}, ({ info }) => info[0]!);

const broken: Kernel = defineKernel({
  name: "broken",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 1.5; }`,
});

/** One LCG step on the CPU. */
function lcg(x: number): number {
  return (Math.imul(x, 1664525) + 1013904223) >>> 0;
}

/** `n` LCG steps as one affine map `x → a·x + c` (mod 2^32), by squaring. */
function lcgPower(n: number): [number, number] {
  let [a, c] = [1, 0]; // the identity
  let [pa, pc] = [1664525, 1013904223]; // the map applied 2^k times
  for (; n > 0; n >>>= 1) {
    if (n & 1) [a, c] = [Math.imul(pa, a) >>> 0, (Math.imul(pa, c) + pc) >>> 0];
    [pa, pc] = [Math.imul(pa, pa) >>> 0, (Math.imul(pa, pc) + pc) >>> 0];
  }
  return [a, c];
}

/** The CPU reference: each element of `start` after every run of `runs` LCG steps. */
function reference(start: Uint32Array, ...runs: number[]): number[] {
  const maps = runs.map(lcgPower);
  return [...start].map((v) => maps.reduce((x, [a, c]) => (Math.imul(a, x) + c) >>> 0, v));
}

const WORKGROUPS = 32;
const N = WORKGROUPS * 64;

/** `N` distinct u32 to start from. */
function start(): Uint32Array {
  return Uint32Array.from({ length: N }, (_, i) => i * 2654435761 >>> 0);
}

/** Queues `n` steps over `x` (enough work that a read behind it waits for it). */
function work(client: ComputeClient<Transport>, x: Handle, n: number): void {
  launchWithinBudget(client, steps, [WORKGROUPS], [x], new Uint32Array([n]));
}

/** What `spyOn` gives: the calls made so far, a wait for all of them to settle, and the method put back. */
interface Spy {
  count(): number;
  settled(): Promise<unknown>;
  restore(): void;
}

/** Watches the calls of one link method: what a client call issues, and when the issued call is done. */
function spyOn(client: ComputeClient<Transport>, method: "read" | "sync"): Spy {
  const link = client.link as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = link[method]!;
  const calls: Promise<unknown>[] = [];
  link[method] = function (this: unknown, ...args: unknown[]) {
    const call = original.apply(this, args);
    calls.push(call);
    return call;
  };
  return {
    count: () => calls.length,
    settled: () => Promise.allSettled(calls),
    restore: () => void delete link[method],
  };
}

/** True once `p` has settled, checked after a few microtasks only (no event loop turn). */
async function settledWithinMicrotasks(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(() => settled = true, () => settled = true);
  for (let i = 0; i < 8; i++) await Promise.resolve();
  return settled;
}

Deno.test("the CPU reference's LCG by squaring agrees with stepping one at a time", () => {
  for (const n of [0, 1, 2, 3, 1000, 4097]) {
    for (const v of [0, 1, 12345, 0xffff_ffff]) {
      let x = v;
      for (let i = 0; i < n; i++) x = lcg(x);
      assert.equal(reference(new Uint32Array([v]), n)[0], x, `n = ${n}, v = ${v}`);
    }
  }
});

clientTest(
  "a read abandoned while it waits rejects with the signal's reason; the work around it runs in order and a later read sees it all",
  async (client) => {
    const init = start();
    const x = client.create(init);
    work(client, x, 20_000);
    const controller = new AbortController();
    const abandoned = client.read(x, Uint32Array, { signal: controller.signal });
    const sameTick = client.read(x, Uint32Array); // shares the abandoned read's device wait
    work(client, x, 3_000);
    const reason = new Error("no longer needed");
    controller.abort(reason);
    await assert.rejects(abandoned, (e: unknown) => e === reason);
    assert.deepEqual([...await sameTick], reference(init, 20_000), "a read of the same tick still gets its bytes");
    assert.deepEqual([...await client.read(x, Uint32Array)], reference(init, 20_000, 3_000));
    // The client goes on as before: launches, reads and syncs.
    work(client, x, 1);
    await client.sync();
    assert.deepEqual([...await client.read(x, Uint32Array)], reference(init, 20_000, 3_000, 1));
    assert.ok(quiet(), "nothing is left in flight or parked");
  },
);

clientTest(
  "readMany and readTensor abandoned while they wait reject with the reason; their memory is intact",
  async (client) => {
    const init = start();
    const x = client.create(init);
    const [t] = client.createTensors([{
      descriptor: { shape: [4, 2], elemSize: 4 },
      data: new Float32Array(8).fill(2),
    }]);
    work(client, x, 5_000);
    const controller = new AbortController();
    const many = client.readMany([x, t!.handle], Uint32Array, { signal: controller.signal });
    const tensor = client.readTensor(t!, Float32Array, { signal: controller.signal });
    controller.abort("stop");
    await assert.rejects(many, (e: unknown) => e === "stop");
    await assert.rejects(tensor, (e: unknown) => e === "stop");
    const [xs, ts] = await client.readMany([x, t!.handle], Uint32Array);
    assert.deepEqual([...xs!], reference(init, 5_000));
    assert.deepEqual([...new Float32Array(ts!.buffer, ts!.byteOffset, 8)], new Array(8).fill(2));
    assert.deepEqual([...await client.readTensor(t!, Float32Array)], new Array(8).fill(2));
  },
);

clientTest("a signal already aborted rejects at once with its reason and issues nothing", async (client) => {
  const x = client.create(new Uint32Array([7, 8]));
  const [t] = client.createTensors([{ descriptor: { shape: [2], elemSize: 4 }, data: new Uint32Array([1, 2]) }]);
  const reason = new Error("too late");
  const signal = AbortSignal.abort(reason);
  const reads = spyOn(client, "read");
  const syncs = spyOn(client, "sync");
  try {
    for (
      const p of [
        client.read(x, Uint32Array, { signal }),
        client.readMany([x, x], undefined, { signal }),
        client.readTensor(t!, Uint32Array, { signal }),
        client.sync({ signal }),
      ]
    ) {
      assert.ok(await settledWithinMicrotasks(p), "settled before any event loop turn");
      await assert.rejects(p, (e: unknown) => e === reason);
    }
    assert.equal(reads.count(), 0, "no read was issued");
    assert.equal(syncs.count(), 0, "no sync was issued");
    // Arguments are still checked first: a bad handle is a TypeError, not the reason.
    await assert.rejects(client.read("x" as unknown as Handle, undefined, { signal }), TypeError);
    // A signal that never aborts costs nothing: the call is issued once and resolves.
    const live = new AbortController().signal;
    assert.deepEqual([...await client.read(x, Uint32Array, { signal: live })], [7, 8]);
    await client.sync({ signal: live });
    assert.equal(reads.count(), 1);
    assert.equal(syncs.count(), 1);
  } finally {
    reads.restore();
    syncs.restore();
  }
});

clientTest(
  "a sync abandoned while it waits rejects with the reason; the work still runs and a later sync resolves",
  async (client) => {
    const init = start();
    const x = client.create(init);
    work(client, x, 20_000);
    const controller = new AbortController();
    const abandoned = client.sync({ signal: controller.signal });
    const reason = new DOMException("user went away", "AbortError");
    controller.abort(reason);
    await assert.rejects(abandoned, (e: unknown) => e === reason);
    work(client, x, 7);
    await client.sync();
    assert.deepEqual([...await client.read(x, Uint32Array)], reference(init, 20_000, 7));
  },
);

clientTest(
  "AbortSignal.timeout's reason, a TimeoutError DOMException, is what an abandoned wait rejects with",
  async (client) => {
    const init = start();
    const x = client.create(init);
    const isTimeout = (signal: AbortSignal) => (e: unknown) =>
      e === signal.reason && e instanceof DOMException && e.name === "TimeoutError";
    // A timeout that already fired.
    const fired = AbortSignal.timeout(0);
    await new Promise((resolve) => fired.addEventListener("abort", resolve, { once: true }));
    await assert.rejects(client.read(x, Uint32Array, { signal: fired }), isTimeout(fired));
    await assert.rejects(client.sync({ signal: fired }), isTimeout(fired));
    // A timeout that fires while the read waits behind work: it rejects with the reason, unless the read
    // resolved first (a thread blocked by a software device, or a fast GPU) and the signal had not fired then.
    work(client, x, 30_000);
    const signal = AbortSignal.timeout(1);
    const outcome = await client.read(x, Uint32Array, { signal }).then(
      (values) => ({ values, firedBefore: signal.aborted }),
      (error: unknown) => ({ error }),
    );
    if ("error" in outcome) assert.ok(isTimeout(signal)(outcome.error), String(outcome.error));
    else {
      assert.equal(outcome.firedBefore, false, "a read that resolved did so before its signal fired");
      assert.deepEqual([...outcome.values], reference(init, 30_000));
    }
    assert.deepEqual([...await client.read(x, Uint32Array)], reference(init, 30_000));
  },
);

clientTest("queued errors an abandoned read drains are raised once, by the next sync of its stream", async (client) => {
  const x = client.create(new Uint32Array([5]));
  client.launch(broken, [1], [x]);
  const reads = spyOn(client, "read");
  const controller = new AbortController();
  const abandoned = client.read(x, Uint32Array, { signal: controller.signal });
  reads.restore();
  controller.abort("gone");
  await assert.rejects(abandoned, (e: unknown) => e === "gone");
  await reads.settled(); // the read has drained the queued error: the sync finds none of its own
  await client.onStream(1).sync(); // another stream's queue held nothing
  await assert.rejects(client.sync(), (e: unknown) => {
    assert.ok(e instanceof ServerUnhealthyError, String(e));
    assert.equal(e.errors.length, 1);
    assert.ok(e.errors[0] instanceof CompilationError);
    return true;
  });
  await client.sync();
  assert.deepEqual([...await client.read(x, Uint32Array)], [5]);
  assert.ok(quiet());
});

clientTest(
  "queued errors an abandoned sync drains are raised once, by the next read, and flush raises them too",
  async (client) => {
    const x = client.create(new Uint32Array([5]));
    for (const next of ["read", "flush"] as const) {
      client.launch(broken, [1], [x]);
      const syncs = spyOn(client, "sync");
      const controller = new AbortController();
      const abandoned = client.sync({ signal: controller.signal });
      controller.abort("gone");
      syncs.restore();
      await assert.rejects(abandoned, (e: unknown) => e === "gone");
      await syncs.settled(); // the sync has drained the queued error: the next call finds none of its own
      await assert.rejects(
        next === "read" ? client.read(x) : client.flush(),
        (e: unknown) => e instanceof ServerUnhealthyError && e.errors.length === 1,
        next,
      );
      await client.sync();
    }
    assert.deepEqual([...await client.read(x, Uint32Array)], [5]);
    assert.ok(quiet());
  },
);

clientTest(
  "a sync made while an abandoned read still runs waits for it, and raises what it drained",
  async (client) => {
    const x = client.create(new Uint32Array([5]));
    client.launch(broken, [1], [x]);
    // The read's answer reaches the client 100 ms after the read is done (a slow transport).
    const link = client.link as unknown as { read: (...args: unknown[]) => Promise<unknown> };
    const original = link.read;
    const late = <T>(v: T) => new Promise<T>((resolve) => setTimeout(() => resolve(v), 100));
    let done: Promise<unknown> = Promise.resolve();
    link.read = function (this: unknown, ...args: unknown[]) {
      const read = original.apply(this, args);
      done = read.catch(() => {});
      return read.then(late, (e) => late(e).then((e) => Promise.reject(e)));
    };
    const controller = new AbortController();
    const abandoned = client.read(x, undefined, { signal: controller.signal });
    delete (link as { read?: unknown }).read;
    controller.abort("gone");
    await assert.rejects(abandoned, (e: unknown) => e === "gone");
    await done; // the read has drained the queued error: the sync finds none of its own
    await assert.rejects(client.sync(), (e: unknown) => e instanceof ServerUnhealthyError && e.errors.length === 1);
    await client.sync();
    assert.ok(quiet());
  },
);

clientTest(
  "a queued error that an abandoned read shares with a live read of its device wait is raised once",
  async (client) => {
    const x = client.create(new Uint32Array([5]));
    for (const liveFirst of [true, false]) {
      client.launch(broken, [1], [x]);
      const controller = new AbortController();
      const live1 = liveFirst ? client.read(x) : null;
      const abandoned = client.read(x, undefined, { signal: controller.signal });
      controller.abort("gone");
      const live = live1 ?? client.read(x);
      await assert.rejects(abandoned, (e: unknown) => e === "gone");
      await assert.rejects(live, (e: unknown) => e instanceof ServerUnhealthyError && e.errors.length === 1);
      await client.sync(); // nothing left to raise
      assert.ok(quiet(), `liveFirst = ${liveFirst}`);
    }
  },
);

clientTest("the same error queued again later and drained by an abandoned read is raised again", async (client) => {
  const x = client.create(new Uint32Array([5]));
  // A read with a signal that stays in flight throughout (its answer comes 300 ms late), so that the
  // client keeps watching for failures shared between live and abandoned reads.
  const link = client.link as unknown as { read: (...args: unknown[]) => Promise<unknown> };
  const original = link.read;
  let done: Promise<unknown> = Promise.resolve();
  link.read = function (this: unknown, ...args: unknown[]) {
    const read = original.apply(this, args);
    done = read;
    return read.then((v) => new Promise((resolve) => setTimeout(() => resolve(v), 300)));
  };
  const slow = client.read(x, Uint32Array, { signal: new AbortController().signal });
  delete (link as { read?: unknown }).read;
  await done; // its device wait is over (the reads below do not share it)
  // The error once, raised by a live read.
  client.launch(broken, [1], [x]);
  await assert.rejects(client.read(x), (e: unknown) => e instanceof ServerUnhealthyError && e.errors.length === 1);
  // The same error again, drained by an abandoned read: a new error, not the one raised already.
  client.launch(broken, [1], [x]);
  const reads = spyOn(client, "read");
  const controller = new AbortController();
  const abandoned = client.read(x, undefined, { signal: controller.signal });
  reads.restore();
  controller.abort("gone");
  await assert.rejects(abandoned, (e: unknown) => e === "gone");
  await reads.settled();
  await assert.rejects(client.sync(), (e: unknown) => e instanceof ServerUnhealthyError && e.errors.length === 1);
  assert.deepEqual([...await slow], [5]);
  await client.sync();
  assert.ok(quiet());
});

clientTest(
  "an abandoned read that fails later, its device destroyed, leaves no unhandled rejection",
  async (client) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: PromiseRejectionEvent) => {
      unhandled.push(e.reason);
      e.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", onUnhandled);
    try {
      const x = client.create(start());
      work(client, x, 20_000);
      client.launch(broken, [1], [x]); // whichever comes first, the read fails: its queued error or the loss
      const controller = new AbortController();
      const abandoned = client.read(x, Uint32Array, { signal: controller.signal });
      const abandonedSync = client.sync({ signal: controller.signal });
      controller.abort("gone");
      client.destroy();
      await assert.rejects(abandoned, (e: unknown) => e === "gone");
      await assert.rejects(abandonedSync, (e: unknown) => e === "gone");
      await client.ended;
      for (let i = 0; i < 5; i++) await macrotask();
      assert.deepEqual(unhandled, []);
      assert.ok(quiet(), "a destroyed device's waits are forgotten");
    } finally {
      globalThis.removeEventListener("unhandledrejection", onUnhandled);
    }
  },
);

clientTest("thousands of reads with one long-lived signal leave no listener on it", async (client) => {
  const controller = new AbortController();
  const signal = controller.signal;
  let added = 0;
  let removed = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
    added++;
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<AbortSignal["removeEventListener"]>) => {
    removed++;
    remove(...args);
  };
  const x = client.create(new Uint32Array([1, 2, 3]));
  for (let round = 0; round < 10; round++) {
    const reads = Array.from({ length: 200 }, () => client.read(x, Uint32Array, { signal }));
    for (const r of await Promise.all(reads)) assert.deepEqual([...r], [1, 2, 3]);
    await client.sync({ signal });
  }
  assert.equal(added, 2010);
  assert.equal(removed, added, "every listener was removed once its wait settled");
  assert.ok(quiet());
  // The signal still works after all that: the next wait it abandons rejects with its reason.
  const last = client.read(x, Uint32Array, { signal });
  controller.abort("finally");
  await assert.rejects(last, (e: unknown) => e === "finally");
});

clientTest("bad options are refused with a TypeError naming the call, and issue nothing", async (client) => {
  const x = client.create(new Uint32Array([1]));
  const [t] = client.createTensors([{ descriptor: { shape: [1], elemSize: 4 }, data: new Uint32Array([1]) }]);
  const reads = spyOn(client, "read");
  const syncs = spyOn(client, "sync");
  try {
    const bad = <T>(p: Promise<T>, pattern: RegExp) =>
      assert.rejects(p, (e: unknown) => e instanceof TypeError && pattern.test(e.message));
    const any = (v: unknown) => v as { signal?: AbortSignal };
    await bad(client.read(x, undefined, any(5)), /^read: options must be an object such as \{ signal \}, got 5/);
    await bad(client.read(x, undefined, any(null)), /^read: options must be an object.*null/);
    await bad(client.read(x, undefined, any({ signal: {} })), /^read: options\.signal must be an AbortSignal/);
    await bad(client.readMany([x], undefined, any("fast")), /^readMany: options must be an object/);
    await bad(client.readMany([x], undefined, any({ signal: true })), /^readMany: options\.signal must be/);
    await bad(client.readTensor(t!, undefined, any({ signal: 1 })), /^readTensor: options\.signal must be/);
    await bad(client.sync(any(7)), /^sync: options must be an object/);
    await bad(client.sync(any({ signal: new EventTarget() })), /^sync: options\.signal must be an AbortSignal/);
    assert.equal(reads.count(), 0);
    assert.equal(syncs.count(), 0);
    // Empty options, or an undefined signal, are no options at all.
    assert.deepEqual([...await client.read(x, Uint32Array, {})], [1]);
    await client.sync({ signal: undefined });
  } finally {
    reads.restore();
    syncs.restore();
  }
});
