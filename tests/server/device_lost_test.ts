/**
 * Contract under test: when the device is lost or destroyed, every pending
 * promise rejects with a typed `DeviceLostError` within a bounded time, later
 * calls throw it, nothing hangs, and a new client works afterwards.
 */

import assert from "node:assert/strict";
import { createClient, DeviceLostError } from "../../mod.ts";
import type { ProfileDuration } from "../../server.ts";
import { incKernel, readU32 } from "../_gpu.ts";

/** Rejects if `p` has not settled within `ms` milliseconds. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  return Promise.race([
    p,
    new Promise<never>((_, reject) =>
      signal.addEventListener("abort", () => reject(new Error(`still pending after ${ms} ms`)))
    ),
  ]);
}

async function expectLost(p: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(() => within(p, 5000), (e: unknown) => {
    assert.ok(e instanceof DeviceLostError, `${what}: expected DeviceLostError, got ${e}`);
    return true;
  });
}

Deno.test("destroying the device under queued work and pending reads rejects every promise with DeviceLostError", async () => {
  const client = await createClient();
  const x = client.create(new Uint32Array(256));
  for (let i = 0; i < 100; i++) client.launch(incKernel, [4], [x]); // queued, some unsubmitted
  const other = client.onStream(2);
  const y = other.create(new Uint32Array(16));
  const pending = [client.read(x), other.read(y), client.sync(), client.readMany([x, x])];
  client.server.device.destroy(); // the device goes away underneath the client
  await Promise.all(pending.map((p, i) => expectLost(p, `pending #${i}`)));
  // Later calls throw at once, whatever they are.
  assert.throws(() => client.launch(incKernel, [1], [x]), DeviceLostError);
  assert.throws(() => client.empty(16), DeviceLostError);
  assert.throws(() => client.write(x, new Uint32Array(256)), DeviceLostError);
  await expectLost(client.read(x), "read after loss");
  await expectLost(client.sync(), "sync after loss");
  await expectLost(client.flush(), "flush after loss");
  await expectLost(client.startProfile(), "startProfile after loss");
  client.destroy(); // still safe
  // A new client works.
  const fresh = await createClient();
  try {
    const z = fresh.create(new Uint32Array(64));
    fresh.launch(incKernel, [1], [z]);
    assert.ok((await readU32(fresh, z)).every((v) => v === 1));
  } finally {
    fresh.destroy();
  }
});

Deno.test("client.destroy() rejects pending reads, syncs and profiles with DeviceLostError (destroyed)", async () => {
  const client = await createClient();
  const x = client.create(new Uint32Array(64));
  client.launch(incKernel, [1], [x]);
  const token = await client.startProfile();
  client.launch(incKernel, [1], [x]);
  let duration: ProfileDuration | null = null;
  const ended = client.endProfile(token).then((d) => (duration = d));
  const read = client.read(x);
  const sync = client.sync();
  client.destroy();
  for (const [p, what] of [[read, "read"], [sync, "sync"]] as [Promise<unknown>, string][]) {
    await assert.rejects(() => within(p, 5000), (e: unknown) => {
      assert.ok(e instanceof DeviceLostError, `${what}: ${e}`);
      assert.equal(e.reason, "destroyed");
      return true;
    });
  }
  await ended.catch((e) => assert.ok(e instanceof DeviceLostError));
  if (duration !== null) await expectLost((duration as ProfileDuration).ticks, "profile ticks");
  client.destroy(); // destroying twice is a no-op
  assert.equal(client.server.closed, true);
});

Deno.test("a lost device fails a capture in progress and graph calls afterwards", async () => {
  const client = await createClient();
  const x = client.create(new Uint32Array(64));
  client.graphPrepare();
  client.launch(incKernel, [1], [x]);
  await client.beginCapture();
  client.launch(incKernel, [1], [x]);
  client.server.device.destroy();
  await within(client.server.device.lost, 5000); // the loss becomes known
  await expectLost(client.endCapture(), "endCapture");
  assert.throws(() => client.graphPrepare(), DeviceLostError);
  client.destroy();
});

for (const fastReads of [false, true]) {
  Deno.test(`with fastReads ${fastReads}, a sync pending when the device is destroyed rejects with DeviceLostError, and later calls throw it`, async () => {
    const client = await createClient({ fastReads });
    try {
      const x = client.create(new Uint32Array(1 << 14));
      for (let i = 0; i < 8; i++) client.launch(incKernel, [256], [x]);
      const pending = client.sync();
      client.server.device.destroy(); // lost under the client (as a real loss would be)
      await assert.rejects(
        within(pending, 5000),
        (e: unknown) => e instanceof DeviceLostError,
        "not a raw DOMException",
      );
      assert.throws(() => client.launch(incKernel, [1], [x]), DeviceLostError);
      assert.throws(() => client.create(new Uint32Array(4)), DeviceLostError);
      await assert.rejects(client.flush(), DeviceLostError);
    } finally {
      client.destroy();
    }
  });
}
