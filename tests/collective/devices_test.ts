/**
 * Contract under test: logical devices (CubeCL's `DeviceService::init`, once
 * per device): `createClient({ deviceIndex })` opens device `n` on its first
 * request and shares its server afterwards, `client.deviceId`, listing and
 * closing devices, and devices the application owns.
 */

import assert from "node:assert/strict";
import { closeDevices, createClient, listDevices } from "../../mod.ts";

Deno.test("the first request for an index opens its device; later ones get a client of the same server", async () => {
  try {
    const [a, b] = await Promise.all([createClient({ deviceIndex: 2 }), createClient({ deviceIndex: 2, stream: 3 })]);
    assert.equal(a.server, b.server);
    assert.equal(b.stream, 3);
    const other = await createClient({ deviceIndex: 5 });
    assert.notEqual(other.server, a.server);
    assert.notEqual(other.server.device, a.server.device);
    assert.equal(a.deviceId.index, 2);
    assert.equal(other.deviceId.index, 5);
    const kind = a.properties.identity.isFallbackAdapter ? "cpu" : a.deviceId.kind;
    assert.deepEqual(a.deviceId, { kind, index: 2 });
    assert.deepEqual(a.server.deviceId.indexId, 2);
    // Memory written through one client is read through the other.
    using h = a.create(new Uint32Array([7, 8]));
    assert.deepEqual([...await b.read(h, Uint32Array)], [7, 8]);
  } finally {
    await closeDevices();
  }
});

Deno.test("listDevices names every open device by kind and index, and closeDevices frees the index for a fresh device", async () => {
  try {
    const zero = await createClient({ deviceIndex: 0 });
    const one = await createClient({ deviceIndex: 1 });
    assert.deepEqual(listDevices().map((d) => [d.kind, d.index]), [[zero.deviceId.kind, 0], [one.deviceId.kind, 1]]);
    assert.equal(listDevices()[0]!.description, zero.properties.identity.description);
    await closeDevices(1);
    assert.equal(one.server.closed, true);
    assert.equal(zero.server.closed, false);
    assert.deepEqual(listDevices().map((d) => d.index), [0]);
    const again = await createClient({ deviceIndex: 1 });
    assert.notEqual(again.server, one.server);
    assert.equal(again.server.closed, false);
    await closeDevices([7, 8]); // not open: nothing to do
    assert.equal(listDevices().length, 2);
  } finally {
    await closeDevices();
  }
  assert.deepEqual(listDevices(), []);
});

Deno.test("a client without deviceIndex opens a fresh device at the lowest free index, and destroy() frees it", async () => {
  try {
    const a = await createClient();
    const b = await createClient();
    assert.deepEqual([a.deviceId.index, b.deviceId.index], [0, 1]);
    assert.notEqual(a.server, b.server);
    a.destroy();
    const c = await createClient();
    assert.equal(c.deviceId.index, 0);
    assert.equal((await createClient({ deviceIndex: 1 })).server, b.server);
  } finally {
    await closeDevices();
  }
});

for (const worker of [false, true]) {
  Deno.test(`a later request may repeat the first request's options but not change them [${worker ? "worker" : "main"}]`, async () => {
    const open = (options: { tasksMax?: number; fastReads?: boolean }) =>
      worker
        ? createClient({ deviceIndex: 0, worker: true, ...options })
        : createClient({ deviceIndex: 0, ...options });
    try {
      const first = await open({ tasksMax: 64 });
      const again = await open({ tasksMax: 64 });
      await open({});
      assert.equal(again.deviceId.index, first.deviceId.index);
      await assert.rejects(
        () => open({ tasksMax: 128 }),
        (e: Error) =>
          e instanceof TypeError && /device 0 is open with tasksMax = 64; this request asks 128/.test(e.message),
      );
      await assert.rejects(() => open({ fastReads: true }), /device 0 is open with fastReads = undefined/);
    } finally {
      await closeDevices();
    }
  });
}

Deno.test("a bad deviceIndex, or deviceIndex with a device of one's own, is refused before any device is requested", async () => {
  await assert.rejects(() => createClient({ deviceIndex: -1 }), RangeError);
  await assert.rejects(() => createClient({ deviceIndex: 1.5 }), RangeError);
  await assert.rejects(() => createClient({ deviceIndex: 65536 }), RangeError);
  const adapter = (await navigator.gpu.requestAdapter())!;
  const device = await adapter.requestDevice();
  try {
    await assert.rejects(() => createClient({ deviceIndex: 0, device }), TypeError);
    assert.deepEqual(listDevices(), []);
  } finally {
    device.destroy();
  }
});

Deno.test("a device the application owns is an existing device, listed but left open by closeDevices", async () => {
  const adapter = (await navigator.gpu.requestAdapter())!;
  const device = await adapter.requestDevice();
  try {
    const mine = await createClient({ device });
    const numbered = await createClient({ deviceIndex: 0 });
    assert.equal(mine.deviceId.kind, "existing");
    assert.equal(mine.server.deviceId.typeId, 5);
    // Sorted by CubeCL's type id: existing (5) after every kind of adapter.
    assert.deepEqual(listDevices().map((d) => d.kind), [numbered.deviceId.kind, "existing"]);
    await closeDevices();
    assert.equal(mine.server.closed, false);
    mine.destroy();
    assert.deepEqual(listDevices(), []);
  } finally {
    device.destroy();
  }
});
