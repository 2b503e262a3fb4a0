/**
 * Found by auditing profile-level logging (`profiling=basic`, which
 * timestamps every dispatch): each submit made a timestamp resolve buffer and
 * a readback buffer that were read back and destroyed only by `sync()`. A
 * program that waits with `read()` (or only flushes) and never syncs kept two
 * more GPU buffers alive per submit, without bound: 200 launch-and-read
 * rounds left 400 of them. The logged timings are now read back in the
 * background once a few submits are pending, and go straight into the
 * logger's summary, so nothing grows and no dispatch is missing at `sync()`.
 */

import assert from "node:assert/strict";
import { createClient } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";

Deno.test("profile-level logging without sync keeps a bounded number of timestamp buffers and still counts every dispatch", async () => {
  const file = await Deno.makeTempFile({ suffix: ".log" });
  const client = await createClient({ logger: { profiling: "basic", sink: { file, append: false } } });
  try {
    const device = client.server.device;
    const create = device.createBuffer;
    let live = 0;
    let most = 0;
    device.createBuffer = function (this: GPUDevice, d: GPUBufferDescriptor) {
      const b = create.call(this, d);
      if (!String(d.label).includes("timestamp")) return b;
      live++;
      most = Math.max(most, live);
      const destroy = b.destroy;
      let dead = false;
      b.destroy = function (this: GPUBuffer) {
        if (!dead) live--;
        dead = true;
        return destroy.call(this);
      };
      return b;
    };
    const x = client.create(new Uint32Array(64));
    const rounds = 120;
    try {
      for (let i = 0; i < rounds; i++) {
        client.launch(incKernel, [1], [x]);
        await client.read(x); // waits for the device, but is not a sync
      }
    } finally {
      device.createBuffer = create;
    }
    assert.ok(most <= 40, `${most} timestamp buffers were alive at once over ${rounds} submits`);
    await client.sync();
    assert.equal(live, 0, "every timestamp buffer is destroyed once read back");
    const log = await Deno.readTextFile(file);
    assert.match(log, new RegExp(`inc\\s+[\\d.]+ ms\\s+${rounds}×`), "the summary counts every dispatch");
  } finally {
    client.destroy();
    await Deno.remove(file);
  }
});
