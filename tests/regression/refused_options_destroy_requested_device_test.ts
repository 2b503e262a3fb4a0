/**
 * Found by auditing `createClient`'s option checks: options refused after the
 * runtime had requested its own device (`tasksMax: 0`, an invalid `memory`
 * layout, a negative `stream`) threw the right error but left that device
 * alive, and for a bad `stream` the whole server with it, unreachable by the
 * caller. A refused `createClient` must leave nothing behind.
 */

import assert from "node:assert/strict";
import { type ClientOptions, createClient, PoolConfigError } from "../../mod.ts";

/** Runs `fn` while recording every device the runtime requests from an adapter. */
async function recordingDevices(fn: () => Promise<void>): Promise<GPUDevice[]> {
  const devices: GPUDevice[] = [];
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (this: GPUAdapter, descriptor?: GPUDeviceDescriptor) {
    const device = await requestDevice.call(this, descriptor);
    devices.push(device);
    return device;
  };
  try {
    await fn();
  } finally {
    GPUAdapter.prototype.requestDevice = requestDevice;
  }
  return devices;
}

/** True when the device is (or is about to be) destroyed, waiting at most `ms`. */
async function destroyedWithin(device: GPUDevice, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const lost = device.lost.then((info) => info.reason === "destroyed");
  try {
    return await Promise.race([lost, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const refused: [string, ClientOptions, new (...args: never[]) => Error][] = [
  ["tasksMax: 0", { tasksMax: 0 }, RangeError],
  ["an empty memory layout", { memory: { pools: [] } }, PoolConfigError],
  ["stream: -1", { stream: -1 }, RangeError],
];

for (const [what, options, type] of refused) {
  Deno.test(`createClient refused for ${what} destroys the device it requested`, async () => {
    const devices = await recordingDevices(async () => {
      await assert.rejects(() => createClient(options), type);
    });
    for (const device of devices) {
      const destroyed = await destroyedWithin(device, 1000);
      if (!destroyed) device.destroy();
      assert.ok(destroyed, `the device requested for ${what} is still alive`);
    }
  });
}
