/**
 * Contract under test: `DeviceContext.guard()`, through which every awaited
 * call (`sync`, `flush`, `read`, profiles, captures) waits for device work,
 * passes results and errors through, rejects with the `DeviceLostError` the
 * moment the device is lost, and keeps nothing once the guarded promise has
 * settled (so a client that syncs a million times holds no more than one
 * that synced once).
 */

import assert from "node:assert/strict";
import { DeviceLostError } from "../../mod.ts";
import { DeviceContext } from "../../src/stream/device_context.ts";

/** A context over a stand-in device: `guard` and `markLost` touch nothing else (the count copier only keeps the alignment). */
const context = () =>
  new DeviceContext({
    device: { queue: {} } as unknown as GPUDevice,
    bindGroups: null as never,
    pipelines: null as never,
    settings: { storageOffsetAlignment: 256 } as never,
    logger: null as never,
  });

Deno.test("DeviceContext.guard() passes values and errors through and holds nothing once they settle", async () => {
  const ctx = context();
  for (let i = 0; i < 1000; i++) assert.equal(await ctx.guard(Promise.resolve(i)), i);
  const failure = new Error("device work failed");
  await assert.rejects(() => ctx.guard(Promise.reject(failure)), (e: unknown) => e === failure);
  const { promise, resolve } = Promise.withResolvers<string>();
  const guarded = ctx.guard(promise);
  assert.equal(ctx.guardedCount, 1);
  resolve("done");
  assert.equal(await guarded, "done");
  assert.equal(ctx.guardedCount, 0);
});

Deno.test("DeviceContext.guard() rejects pending and later guarded promises with the DeviceLostError of the loss", async () => {
  const ctx = context();
  const never = Promise.withResolvers<void>();
  const late = Promise.withResolvers<void>();
  const settled = Promise.allSettled([ctx.guard(never.promise), ctx.guard(late.promise)]);
  assert.equal(ctx.guardedCount, 2);
  const lost = new DeviceLostError("the device was lost (test)", { reason: "unknown" });
  ctx.markLost(lost);
  ctx.markLost(new DeviceLostError("a second loss is ignored", { reason: "unknown" }));
  assert.deepEqual(await settled, [{ status: "rejected", reason: lost }, { status: "rejected", reason: lost }]);
  assert.equal(ctx.guardedCount, 0);
  late.reject(new Error("the work failed after the loss")); // settles into nothing: no unhandled rejection
  const work = Promise.withResolvers<void>();
  await assert.rejects(() => ctx.guard(work.promise), (e: unknown) => e === lost);
  work.reject(new Error("guarded after the loss, failed later")); // observed by guard: no unhandled rejection
});
