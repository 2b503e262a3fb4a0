/**
 * Found by auditing profiles under device loss: when the caller destroyed the
 * device between a profile's work and its read-back, `endProfile` resolved
 * and its `ticks` and `dispatches` then rejected with the raw `OperationError`
 * ("validation error occurred") of the failed timestamp `mapAsync`, because
 * the mapping failed before the device's `lost` promise had settled. The
 * README's failure model promises a `DeviceLostError` for every pending
 * promise (reads already map that failure to one).
 */

import assert from "node:assert/strict";
import { createClient, DeviceLostError } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";

Deno.test("a profile whose device is destroyed before its timestamps are read back rejects with DeviceLostError", async () => {
  const client = await createClient();
  try {
    const x = client.create(new Uint32Array(64));
    const token = await client.startProfile();
    client.launch(incKernel, [1], [x]);
    client.server.device.destroy(); // underneath the client
    let duration;
    try {
      duration = await client.endProfile(token);
    } catch (e) {
      assert.ok(e instanceof DeviceLostError, `endProfile: ${e}`);
      return;
    }
    for (const [what, p] of [["ticks", duration.ticks], ["dispatches", duration.dispatches]] as const) {
      await assert.rejects(p, (e: unknown) => {
        assert.ok(e instanceof DeviceLostError, `${what}: expected DeviceLostError, got ${e}`);
        return true;
      });
    }
  } finally {
    client.destroy();
  }
});
