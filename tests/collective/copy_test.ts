/**
 * Contract under test: copies between devices: `toClient` between every
 * pair (CubeCL's test), `send`/`recv` pairs matched in call order per
 * direction, and copies to and from a device the application owns.
 */

import assert from "node:assert/strict";
import { closeDevices, type ComputeClient, createClient } from "../../mod.ts";

async function openDevices(n: number): Promise<ComputeClient[]> {
  return await Promise.all(Array.from({ length: n }, (_, i) => createClient({ deviceIndex: i })));
}

async function openPair(): Promise<[ComputeClient, ComputeClient]> {
  return [await createClient({ deviceIndex: 0 }), await createClient({ deviceIndex: 1 })];
}

for (const n of [2, 3, 4]) {
  Deno.test(`toClient copies [0,1,2,3,4,5] between every pair of ${n} devices`, async () => {
    const clients = await openDevices(n);
    try {
      for (const [i, from] of clients.entries()) {
        for (const [j, to] of clients.entries()) {
          using h = from.create(new Float32Array([0, 1, 2, 3, 4, 5]));
          using copy = await from.toClient(h, to);
          assert.equal(copy.owner, to.server);
          assert.deepEqual([...await to.read(copy, Float32Array)], [0, 1, 2, 3, 4, 5], `${i} → ${j}`);
        }
      }
    } finally {
      await closeDevices();
    }
  });
}

Deno.test("send and recv pairs meet in call order, each direction on its own", async () => {
  const [a, b] = await openPair();
  try {
    const fromA = [a.create(new Uint32Array([1, 2, 3])), a.create(new Uint32Array([4, 5, 6]))];
    const fromB = b.create(new Uint32Array([9, 9, 9]));
    const intoB = [b.empty(12), b.empty(12)];
    const intoA = a.empty(12);
    // B receives before A sends; A's second send and B's send cross.
    const done = [
      b.recv(intoB[0]!, 0),
      b.send(fromB, 0),
      b.recv(intoB[1]!, 0),
      a.send(fromA[0]!, 1),
      a.send(fromA[1]!, 1),
      a.recv(intoA, 1),
    ];
    await Promise.all(done);
    assert.deepEqual([...await b.read(intoB[0]!, Uint32Array)], [1, 2, 3]);
    assert.deepEqual([...await b.read(intoB[1]!, Uint32Array)], [4, 5, 6]);
    assert.deepEqual([...await a.read(intoA, Uint32Array)], [9, 9, 9]);
    await Promise.all([a.syncCollective(), b.syncCollective()]);
  } finally {
    await closeDevices();
  }
});

Deno.test("a copy of a byte count that is not a whole word keeps the bytes after it", async () => {
  const [a, b] = await openPair();
  try {
    using src = a.create(new Uint8Array([1, 2, 3, 4, 5, 6, 7]));
    using dst = b.create(new Uint8Array([9, 9, 9, 9, 9, 9, 9, 9]));
    using view = dst.view(0, 1);
    await Promise.all([a.send(src, 1), b.recv(view, 0)]);
    assert.deepEqual([...await b.read(dst)], [1, 2, 3, 4, 5, 6, 7, 9]);
  } finally {
    await closeDevices();
  }
});

Deno.test("an application's own device takes part in copies and all-reduces as an existing device", async () => {
  const adapter = (await navigator.gpu.requestAdapter())!;
  const device = await adapter.requestDevice();
  try {
    const mine = await createClient({ device });
    const zero = await createClient({ deviceIndex: 0 });
    using x = zero.create(new Int32Array([5, -6]));
    using y = mine.create(new Int32Array([1, 2]));
    const devices = [0, mine.deviceId];
    await Promise.all([
      zero.allReduce(x, x, { dtype: "i32", devices }),
      mine.allReduce(y, y, { dtype: "i32", devices }),
    ]);
    assert.deepEqual([...await mine.read(y, Int32Array)], [6, -4]);
    using back = await mine.toClient(y, zero!);
    assert.deepEqual([...await zero.read(back, Int32Array)], [6, -4]);
    mine.destroy();
  } finally {
    await closeDevices();
    device.destroy();
  }
});
