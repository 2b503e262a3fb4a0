/**
 * Found by auditing `createClient({ device })`: `requiredFeatures` was
 * ignored when the caller passed a device, so a device without a required
 * feature was accepted and kernels using it failed later, one compile error
 * at a time. A runtime-requested device refuses such a feature at once
 * (`TypeError`); a caller's device must too, and stay usable.
 */

import assert from "node:assert/strict";
import { createClient } from "../../mod.ts";

Deno.test("createClient({ device }) refuses requiredFeatures the device lacks, leaving the device usable", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  assert.ok(adapter !== null, "no WebGPU adapter");
  const device = await adapter.requestDevice({ label: "caller's device without features" });
  try {
    assert.equal(device.features.has("shader-f16"), false);
    await assert.rejects(
      () => createClient({ device, requiredFeatures: ["shader-f16"] }),
      (e: unknown) => e instanceof TypeError && /shader-f16/.test(e.message),
    );
    const client = await createClient({ device, requiredFeatures: [] });
    client.destroy();
    device.createBuffer({ size: 4, usage: GPUBufferUsage.STORAGE }).destroy(); // still usable
  } finally {
    device.destroy();
  }
});
