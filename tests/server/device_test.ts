/**
 * Contract under test: a device the caller passes in (`createClient({ device })`).
 * The runtime reads its properties from the device itself, leaves it alive when
 * the client is destroyed, and stops listening to it then.
 */

import assert from "node:assert/strict";
import { createClient, DeviceValidationError, ServerUnhealthyError } from "../../mod.ts";
import { incKernel, macrotask, readU32 } from "../_gpu.ts";

/** The caller's own adapter and device, as an application that shares one device would make them. */
async function callersDevice(): Promise<{ adapter: GPUAdapter; device: GPUDevice }> {
  const adapter = await navigator.gpu.requestAdapter();
  assert.ok(adapter !== null, "no WebGPU adapter");
  return { adapter, device: await adapter.requestDevice({ label: "caller's device" }) };
}

/** Raises a validation error outside any error scope, so the device reports it as uncaptured. */
function raiseUncapturedError(device: GPUDevice): void {
  device.createBuffer({
    label: "caller's invalid buffer",
    size: 4,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE,
  });
}

/** Resolves once the device has dispatched `uncapturederror` to a listener added now. */
function nextUncapturedError(device: GPUDevice): Promise<void> {
  const { promise, resolve } = Promise.withResolvers<void>();
  device.addEventListener("uncapturederror", () => resolve(), { once: true });
  return promise;
}

Deno.test("a caller's device gets its identity and the openPassAhead default from device.adapterInfo", async () => {
  const { adapter, device } = await callersDevice();
  try {
    const client = await createClient({ device });
    try {
      const identity = client.server.properties.identity;
      assert.equal(identity.isFallbackAdapter, adapter.info.isFallbackAdapter);
      assert.equal(identity.description, adapter.info.description);
      assert.equal(identity.vendor, adapter.info.vendor);
      assert.equal(client.server.settings.openPassAhead, !adapter.info.isFallbackAdapter);
      const x = client.create(new Uint32Array(130).fill(41));
      client.launch(incKernel, [3], [x]);
      assert.deepEqual(await readU32(client, x), new Uint32Array(130).fill(42));
    } finally {
      client.destroy();
    }
  } finally {
    device.destroy();
  }
});

Deno.test("client.destroy() leaves a caller's device usable and stops listening to its errors", async (t) => {
  const { device } = await callersDevice();
  try {
    const first = await createClient({ device });
    first.destroy();

    await t.step("an uncaptured error after the destroy makes the destroyed client create nothing", async () => {
      const created: string[] = [];
      const createBuffer = device.createBuffer;
      device.createBuffer = (descriptor: GPUBufferDescriptor) => {
        created.push(descriptor.label ?? "(unlabelled)");
        return createBuffer.call(device, descriptor);
      };
      try {
        const seen = nextUncapturedError(device);
        raiseUncapturedError(device);
        await seen;
      } finally {
        device.createBuffer = createBuffer;
      }
      assert.deepEqual(created, ["caller's invalid buffer"]);
    });

    await t.step("a later client on the device runs kernels and alone gets its uncaptured errors", async () => {
      const second = await createClient({ device });
      try {
        const x = second.create(new Uint32Array([1, 2, 3, 4]));
        second.launch(incKernel, [1], [x]);
        assert.deepEqual(await readU32(second, x), new Uint32Array([2, 3, 4, 5]));
        const seen = nextUncapturedError(device);
        raiseUncapturedError(device);
        await seen;
        await assert.rejects(
          () => second.flush(),
          (e: unknown) =>
            e instanceof ServerUnhealthyError && e.errors.length === 1 &&
            e.errors[0] instanceof DeviceValidationError && /uncaptured device error/.test(e.errors[0].message),
        );
        await second.flush(); // drained: healthy again
      } finally {
        second.destroy();
      }
    });
  } finally {
    device.destroy();
  }
});

/** Makes a client on `device`, runs a launch through it, destroys it, and returns a weak reference to its server. */
async function destroyedServerOn(device: GPUDevice): Promise<WeakRef<object>> {
  const client = await createClient({ device });
  const h = client.create(new Uint32Array([1, 2, 3, 4]));
  client.launch(incKernel, [1], [h]);
  assert.deepEqual([...await readU32(client, h)], [2, 3, 4, 5]);
  client.destroy();
  return new WeakRef(client.server);
}

Deno.test("a client destroyed on a caller's device can be garbage-collected while the device lives", async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  assert.ok(gc, "run with --v8-flags=--expose-gc (deno task test does)");
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice({ label: "caller's device" });
  try {
    const server = await destroyedServerOn(device);
    for (let i = 0; i < 10 && server.deref() !== undefined; i++) {
      await macrotask();
      gc();
    }
    assert.equal(server.deref(), undefined, "nothing on the device keeps the destroyed server alive");
  } finally {
    device.destroy();
  }
});

Deno.test("createClient({ device }) with something that is not a GPUDevice is refused with a TypeError naming the option", async () => {
  await assert.rejects(
    createClient({ device: {} as GPUDevice }),
    (e: unknown) => e instanceof TypeError && /device must be a GPUDevice/.test(e.message),
  );
});
