/**
 * Contract under test (issue 19): `createClient({ fastReads: true })` reads,
 * syncs and reads profiles back without Deno's fixed 10 ms wait after the
 * device is done, byte for byte like the spec path, and only behind its
 * guards: a verified Deno version, a start-up self-test, primed staging
 * buffers, observed leftover maps that order the next use of their buffer,
 * and rejections on destroy and device loss like spec reads.
 *
 * "Without the wait" is checked without timing: an early read or sync
 * settles before a zero-delay timer queued just before it fires (a Deno map
 * wait is a timer of at least 10 ms on the same event loop).
 */

import assert from "node:assert/strict";
import { type ComputeClient, createClient, DeviceLostError } from "../../mod.ts";
import { FastReads } from "../../src/memory/fast_reads.ts";
import { MAX_LEFTOVERS } from "../../src/memory/readback_pool.ts";
import { incKernel, rng, withClient } from "../_gpu.ts";

const FAST = { fastReads: true } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes `(i * 13 + seed) & 255` of length `n`. */
function pattern(n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 13 + seed) & 255);
}

/** True when `p` settles before a zero-delay timer queued now fires. */
async function beforeATimer(p: Promise<unknown>): Promise<boolean> {
  let fired = false;
  const timer = setTimeout(() => fired = true, 0);
  await p;
  clearTimeout(timer);
  return !fired;
}

/** A few reads and a pause: the stream's first staging buffers are primed and settled. */
async function warm(client: ComputeClient): Promise<void> {
  const h = client.create(new Uint32Array(4));
  for (let i = 0; i < 3; i++) {
    await client.read(h);
    await client.sync();
    await sleep(25);
  }
  h.release();
}

/** Watches every map of a buffer: a new `mapAsync` or a destroy while its last map is pending is a violation. */
function watchMaps(): { violations: string[]; pendingMaps: () => number; stop: () => void } {
  const proto = GPUBuffer.prototype;
  const { mapAsync, destroy } = proto;
  const pending = new Map<GPUBuffer, number>();
  const violations: string[] = [];
  proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
    if ((pending.get(this) ?? 0) > 0) violations.push(`mapAsync on ${this.label} before its last map settled`);
    pending.set(this, (pending.get(this) ?? 0) + 1);
    const done = () => pending.set(this, pending.get(this)! - 1);
    const p = mapAsync.apply(this, args);
    p.then(done, done);
    return p;
  };
  proto.destroy = function (this: GPUBuffer) {
    if ((pending.get(this) ?? 0) > 0) violations.push(`destroy of ${this.label} while a map was pending`);
    destroy.call(this);
  };
  return {
    violations,
    pendingMaps: () => [...pending.values()].reduce((a, b) => a + b, 0),
    stop: () => Object.assign(proto, { mapAsync, destroy }),
  };
}

Deno.test("fast reads are off by default, and on after the start-up self-test when asked for on Deno 2.9", async () => {
  await withClient((client) => {
    assert.equal(client.fastReads, false);
  }, { fastReads: false });
  await withClient((client) => {
    assert.equal(client.fastReads, Deno.version.deno.startsWith("2.9."));
    if (client.fastReads) assert.match(client.server.fastReadsReason, /self-test passed/);
  }, FAST);
  await assert.rejects(() => createClient({ fastReads: "yes" as never }), TypeError);
});

Deno.test("on a Deno where early maps were not verified, fast reads stay off with one warning naming the version", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice();
  try {
    const warnings: string[] = [];
    const fr = new FastReads((m) => warnings.push(m));
    await fr.start(device, true, "3.0.0");
    assert.equal(fr.active, false);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /Deno 3\.0\.0/);
    assert.match(fr.reason, /verified on Deno 2\.9\.x/);
  } finally {
    device.destroy();
  }
});

Deno.test("a self-test that reads wrong bytes, or throws, leaves fast reads off and says why", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice();
  const proto = GPUBuffer.prototype;
  const getMappedRange = proto.getMappedRange;
  try {
    for (
      const [fake, why] of [
        [function (this: GPUBuffer, ...a: [number?, number?]) {
          return new ArrayBuffer(getMappedRange.apply(this, a).byteLength); // zeros: stale or wrong bytes
        }, /round 1: byte 0 read 0, expected 7/],
        [() => {
          throw new Error("map state is pending");
        }, /threw Error: map state is pending/],
      ] as const
    ) {
      const warnings: string[] = [];
      const fr = new FastReads((m) => warnings.push(m));
      proto.getMappedRange = fake as GPUBuffer["getMappedRange"];
      await fr.start(device, true, "2.9.6");
      proto.getMappedRange = getMappedRange;
      assert.equal(fr.active, false);
      assert.match(fr.reason, why);
      assert.equal(warnings.length, 1);
    }
  } finally {
    proto.getMappedRange = getMappedRange;
    device.destroy();
  }
});

Deno.test("with fast reads, reads and syncs take no map wait: none takes the spec path, and they settle before a zero-delay timer", async () => {
  await withClient(async (client) => {
    if (!client.fastReads) return; // not a verified Deno: the spec path, checked everywhere else
    await warm(client);
    const x = client.create(new Uint32Array(64).fill(5));
    const pool = client.server.stream(0).staging;
    // Before each measured call, every leftover map has settled: its staging buffers are ready again, so no
    // call may take the spec path, and none finds an old leftover due (settling one takes an event loop turn,
    // by design, and that turn would lose the race to the timer).
    const settled = async () => {
      for (let t = 0; pool.leftovers > 0 && t < 400; t++) await sleep(5);
      assert.equal(pool.leftovers, 0, "the leftover maps settled within 2 s");
    };
    const fallbacks = pool.fallbacks;
    let reads = 0;
    let syncs = 0;
    for (let i = 0; i < 5; i++) {
      await settled();
      client.launch(incKernel, [1], [x]);
      if (await beforeATimer(client.read(x, Uint32Array).then((v) => assert.equal(v[63], 6 + 2 * i)))) reads++;
      await settled();
      client.launch(incKernel, [1], [x]);
      if (await beforeATimer(client.sync())) syncs++;
      assert.equal((await client.read(x, Uint32Array))[0], 7 + 2 * i);
    }
    assert.equal(pool.fallbacks - fallbacks, 0, "reads and syncs that took the spec path");
    // The spec path waits Deno's ~10 ms map sleep in every call, so it never beats the timer. On a busy GPU a
    // call can lose the race without any map wait (one whose own map outlasts 12 ms takes a turn for its
    // leftover): on an H100 shared by a dozen test processes, 3 and 1 of 5 syncs lost with none on the spec
    // path. So one win in five shows the path.
    assert.ok(reads >= 1, `${reads} of 5 reads settled before a zero-delay timer`);
    assert.ok(syncs >= 1, `${syncs} of 5 syncs settled before a zero-delay timer`);
  }, FAST);
});

Deno.test("fast reads return exactly the bytes of random sizes from 4 B to 1 MiB, after writes and launches, on every stream", async () => {
  await withClient(async (root) => {
    const streams = [root, root.onStream(1), root.onStream(2)];
    const r = rng(19);
    for (let round = 0; round < 24; round++) {
      const s = streams[round % streams.length]!;
      const n = 4 * (1 + Math.floor(r() ** 4 * 256 * 1024)); // 4 B to 1 MiB, mostly small
      const bytes = pattern(n, round);
      const h = s.create(bytes);
      const expected = new Uint32Array(bytes.slice().buffer);
      if (r() < 0.5) {
        s.launch(incKernel, [Math.ceil(n / 4 / 64)], [h]);
        for (let i = 0; i < expected.length; i++) expected[i] = (expected[i]! + 1) >>> 0;
      }
      const view = n > 8 ? { at: 4 * Math.floor(r() * (n / 4 - 1)), len: 4 } : { at: 0, len: n };
      const [all, again] = r() < 0.5 ? await s.readMany([h, h]) : await Promise.all([s.read(h), s.read(h)]);
      const want = new Uint8Array(expected.buffer);
      assert.deepEqual(all, want, `round ${round}: ${n} B`);
      assert.deepEqual(again, want);
      assert.equal(all!.buffer.byteLength, n);
      assert.deepEqual(all!.subarray(view.at, view.at + view.len), want.subarray(view.at, view.at + view.len));
      h.release();
    }
  }, FAST);
});

Deno.test("fast reads never destroy a staging buffer before its last map settled, nor map one again before then unless the self-test verified reuse", async () => {
  const watch = watchMaps();
  try {
    const client = await createClient(FAST);
    const reuse = client.server.stream(0).staging.reuseCooling;
    const h = client.create(new Uint32Array(256));
    for (let i = 0; i < 400; i++) {
      if (i % 3 === 0) client.write(h, new Uint32Array(256).fill(i));
      const got = await client.read(h, Uint32Array);
      assert.equal(got[255], i - (i % 3));
      if (i % 50 === 0) await client.sync();
      if (i % 97 === 0) client.memoryCleanup(); // drops idle staging buffers, cooling ones included
    }
    client.destroy(); // with leftover maps still pending
    for (let i = 0; i < 50 && watch.pendingMaps() > 0; i++) await sleep(10);
    assert.equal(watch.pendingMaps(), 0, "every leftover map settled");
    const violations = reuse ? watch.violations.filter((v) => v.startsWith("destroy")) : watch.violations;
    assert.deepEqual(violations, []);
  } finally {
    watch.stop();
  }
});

Deno.test("a self-test whose reuse round reads wrong bytes keeps fast reads on, with each staging buffer resting until its leftover settles", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice();
  const proto = GPUBuffer.prototype;
  const getMappedRange = proto.getMappedRange;
  let calls = 0;
  try {
    proto.getMappedRange = function (this: GPUBuffer, ...a: [number?, number?]) {
      const real = getMappedRange.apply(this, a);
      return ++calls === 3 ? new ArrayBuffer(real.byteLength) : real; // the third round: stale bytes
    } as GPUBuffer["getMappedRange"];
    const fr = new FastReads(() => {});
    await fr.start(device, true, "2.9.6");
    assert.equal(fr.active, true);
    assert.equal(fr.reuse, false);
    assert.match(fr.reason, /rest until their leftover maps settle \(reuse failed: round 3: byte 0 read 0/);
  } finally {
    proto.getMappedRange = getMappedRange;
    device.destroy();
  }
});

Deno.test("a loop that awaits nothing but fast reads keeps its leftover maps from piling up, and creates no staging buffer after its first reads", async () => {
  const client = await createClient(FAST);
  try {
    if (!client.fastReads) return; // not a Deno where early maps were verified: nothing to check
    const pool = client.server.stream(0).staging;
    const x = client.create(new Uint32Array(64));
    for (let i = 0; i < 20; i++) await client.read(x);
    const created = pool.created;
    let peak = 0;
    for (let i = 0; i < 3000; i++) {
      client.launch(incKernel, [1], [x]);
      assert.equal((await client.read(x, Uint32Array))[63], i + 1);
      peak = Math.max(peak, pool.leftovers);
    }
    // A turn of the event loop that did not wait (a message to itself) let ~90% of 3,000 pile up. Past the cap, the
    // next read settles every leftover older than Deno's ~11 ms: at most the reads of the last 12 ms stay pending.
    assert.ok(peak <= MAX_LEFTOVERS + 256, `${peak} leftover maps pending at once`);
    if (pool.reuseCooling) assert.equal(pool.created - created, 0, "staging buffers created in the loop");
  } finally {
    client.destroy();
  }
});

Deno.test("destroy() rejects fast reads still waiting with DeviceLostError, as it does spec reads", async () => {
  for (const fastReads of [true, false]) {
    const client = await createClient({ fastReads });
    await warm(client);
    const hs = [1, 2, 3].map((k) => client.create(new Uint32Array(16).fill(k)));
    const reads = hs.map((h) => client.read(h));
    const sync = client.sync();
    client.destroy();
    const outcomes = await Promise.allSettled([...reads, sync]);
    for (const o of outcomes) {
      assert.ok(o.status === "rejected" && o.reason instanceof DeviceLostError, `fastReads ${fastReads}: ${o.status}`);
    }
    await sleep(20); // leftover maps settle after the destroy: none may reject unhandled
  }
});

Deno.test("a lost device rejects fast reads still waiting with DeviceLostError, as it does spec reads", async () => {
  for (const fastReads of [true, false]) {
    const adapter = await navigator.gpu.requestAdapter();
    const device = await adapter!.requestDevice();
    const client = await createClient({ device, fastReads });
    await warm(client);
    const h = client.create(new Uint32Array(16).fill(9));
    const read = client.read(h);
    device.destroy();
    const [o] = await Promise.allSettled([read]);
    assert.ok(o!.status === "rejected" && o!.reason instanceof DeviceLostError, `fastReads ${fastReads}: ${o!.status}`);
    await assert.rejects(() => client.read(h), DeviceLostError);
    client.destroy();
    await sleep(20);
  }
});

Deno.test("a profile's timings read back through early maps match the dispatches it covered", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const token = await client.startProfile();
    for (let i = 0; i < 4; i++) client.launch(incKernel, [1], [x]);
    const d = await client.endProfile(token);
    const dispatches = await d.dispatches;
    assert.equal(dispatches.length, d.method === "device" ? 4 : 0);
    for (const t of dispatches) assert.ok(t.end >= t.start && t.name === "inc");
    assert.equal((await client.read(x, Uint32Array))[0], 4);
  }, FAST);
});

Deno.test("a steady loop of fast reads finds a staging buffer ready to map early for every read: none takes the spec path after the first", async () => {
  const client = await createClient({ fastReads: true });
  try {
    if (!client.fastReads) return; // not a Deno where early maps were verified: nothing to check
    const x = client.create(new Uint32Array(64));
    const pool = client.server.stream(0).staging;
    client.launch(incKernel, [1], [x]);
    await client.read(x);
    const before = pool.fallbacks;
    for (let i = 0; i < 400; i++) {
      client.launch(incKernel, [1], [x]);
      const got = await client.read(x, Uint32Array);
      assert.equal(got[0], i + 2);
      if (i % 50 === 0) await client.sync(); // syncs take the same pool's smallest class
    }
    assert.equal(pool.fallbacks - before, 0, "reads that found every staging buffer cooling");
    assert.ok(pool.created <= 2048, `${pool.created} staging buffers: growth is bounded`);
  } finally {
    client.destroy();
  }
});
