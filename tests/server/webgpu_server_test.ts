/**
 * Contract under test: the `ComputeServer` methods called directly, as a
 * backend author or a higher-level library would.
 */

import assert from "node:assert/strict";
import { CollectiveError, IoError, ServerUnhealthyError } from "../../mod.ts";
import type { WebGpuServer } from "../../src/server/webgpu_server.ts";
import { incKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("read() with non-contiguous strides rejects with IoError unsupported-strides", async () => {
  await withClient(async (client) => {
    const h = client.create(new Float32Array(6));
    const server = client.server;
    await assert.rejects(
      () => server.read([h.copyDescriptor([2, 3], [1, 2], 4)], 0),
      (e: unknown) => e instanceof IoError && e.kind === "unsupported-strides",
    );
    const ok = await server.read([h.copyDescriptor([2, 3], [3, 1], 4)], 0);
    assert.equal(ok[0]!.byteLength, 24);
    // rank 0 and unit dimensions are contiguous whatever their stride
    assert.equal((await server.read([h.copyDescriptor([], [], 4)], 0))[0]!.byteLength, 4);
    assert.equal((await server.read([h.copyDescriptor([1, 6], [99, 1], 4)], 0))[0]!.byteLength, 24);
  });
});

Deno.test("write() with non-contiguous strides queues unsupported-strides for the next flush", async () => {
  await withClient(async (client) => {
    const h = client.create(new Float32Array([1, 2, 3, 4]));
    client.server.write([[h.copyDescriptor([2, 2], [1, 2], 4), new Uint8Array(16)]], 0);
    await assert.rejects(() => client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      assert.ok(e.errors[0] instanceof IoError && e.errors[0].kind === "unsupported-strides");
      return true;
    });
    const back = await client.read(h);
    assert.deepEqual([...new Float32Array(back.buffer, back.byteOffset, 4)], [1, 2, 3, 4]);
  });
});

Deno.test("getResource() hands out the raw buffer range and keeps it alive until released", async () => {
  await withClient(async (client) => {
    const h = client.create(new Uint32Array([1, 2, 3, 4]));
    const r = client.getResource(h);
    assert.ok(r.buffer instanceof GPUBuffer);
    assert.equal(r.offset % 4, 0);
    assert.equal(r.size, 16);
    h.release();
    const other = client.empty(16);
    const sameRange = (x: typeof other) =>
      x.memory.slice?.page.storage.resource === r.buffer && x.memory.slice?.offset === r.offset;
    assert.ok(!sameRange(other), "a pinned range is not reused");
    r.release();
    r.release();
    const again = client.empty(16);
    assert.ok(sameRange(again), "the range is reused once the resource is released");
    // The resource can be used with raw WebGPU on the same device.
    const staging = client.server.device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
    });
    client.write(again, new Uint32Array([5, 6, 7, 8]));
    const res = client.getResource(again);
    const enc = client.server.device.createCommandEncoder();
    enc.copyBufferToBuffer(res.buffer, res.offset, staging, 0, 16);
    client.server.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    assert.deepEqual([...new Uint32Array(staging.getMappedRange())], [5, 6, 7, 8]);
    staging.destroy();
    res.release();
  });
});

Deno.test("commInit refuses an empty set, a device that is not open and a set without the calling device", async () => {
  await withClient((client) => {
    const s = client.server;
    assert.throws(() => s.commInit([]), TypeError);
    assert.throws(() => s.commInit([s.deviceId, { typeId: 0, indexId: 999 }]), CollectiveError);
    assert.throws(() => s.commInit([{ typeId: s.deviceId.typeId, indexId: s.deviceId.indexId + 1 }]), CollectiveError);
    s.commInit([s.deviceId]);
  });
});

Deno.test("streamIds() lists initialised slots, and ids map to slot id % maxStreams", async () => {
  await withClient((client) => {
    const s = client.server;
    assert.deepEqual(s.streamIds(), []);
    client.empty(4);
    client.onStream(5).empty(4);
    client.onStream(5 + s.settings.maxStreams).empty(4);
    assert.deepEqual(s.streamIds(), [0, 5]);
    assert.throws(() => client.onStream(-1), RangeError);
  });
});

Deno.test("openPassAhead defaults to the adapter kind, and launches after each flush run in either mode", async (t) => {
  await withClient((client) => {
    const props = client.server.properties;
    assert.equal(client.server.settings.openPassAhead, !props.identity.isFallbackAdapter);
  });
  for (const openPassAhead of [true, false]) {
    await t.step(`openPassAhead: ${openPassAhead}`, async () => {
      await withClient(async (client) => {
        assert.equal(client.server.settings.openPassAhead, openPassAhead);
        const x = client.create(new Uint32Array(100).fill(7));
        const expected = new Uint32Array(100).fill(7);
        for (let round = 1; round <= 5; round++) {
          for (let i = 0; i < round; i++) client.launch(incKernel, [2], [x]);
          expected.forEach((v, i) => expected[i] = v + round);
          await client.flush();
        }
        assert.deepEqual(await readU32(client, x), expected);
      }, { openPassAhead });
    });
  }
});

Deno.test("launch() refuses bad counts, info, bindings and modes at once, and the launches around them run", async () => {
  await withClient(async (client) => {
    const server = client.server;
    const x = client.create(new Uint32Array(4));
    const small = client.create(new Uint32Array(2));
    client.launch(incKernel, [1], [x]); // compiled and validated before the bad calls
    await client.sync();
    const max = client.properties.hardware.maxCubeCount[0];
    const one = { kind: "static", x: 1, y: 1, z: 1 } as const;
    const bad: [unknown, unknown, unknown, RegExp][] = [
      [{ kind: "static", x: max + 1, y: 1, z: 1 }, { buffers: [x] }, "execute", /maxComputeWorkgroupsPerDimension/],
      [{ kind: "static", x: 1.5, y: 1, z: 1 }, { buffers: [x] }, "execute", /non-negative integers/],
      [{ kind: "static", x: -1, y: 1, z: 1 }, { buffers: [x] }, "execute", /non-negative integers/],
      [{ kind: "static", x: NaN, y: 1, z: 1 }, { buffers: [x] }, "execute", /non-negative integers/],
      [{ kind: "sometimes" }, { buffers: [x] }, "execute", /count must be/],
      [{ kind: "dynamic", binding: small }, { buffers: [x] }, "execute", /needs 12 bytes/],
      [one, { buffers: [x, x] }, "execute", /declares 1 bindings/],
      [one, { buffers: [x], info: new Float64Array(2) }, "execute", /info must be/],
      [one, { buffers: [{}] }, "execute", /buffer 0/],
      [one, { buffers: [x] }, "fast", /mode must be/],
    ];
    for (const [count, args, mode, re] of bad) {
      client.launch(incKernel, [1], [x]);
      assert.throws(() => server.launch(incKernel, count as never, args as never, mode as never, 0), re);
    }
    client.launch(incKernel, [1], [x]);
    await client.flush(); // nothing was queued by the refused calls
    assert.deepEqual([...await readU32(client, x)], [12, 12, 12, 12]);
  });
});

Deno.test("readInto() copies each descriptor's bytes into the given memory, in pieces, exactly as read() returns them", async () => {
  await withClient(async (client) => {
    const server = client.server as unknown as WebGpuServer;
    // 9 MiB + 6 B: three pieces of at most 4 MiB, the last one not a whole word.
    const size = 9 * 1024 * 1024 + 6;
    const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 7 + (i >> 12)) & 255);
    const h = client.create(bytes);
    const small = client.create(new Uint8Array([1, 2, 3, 4, 5]));
    const into = [new Uint8Array(new SharedArrayBuffer(size)), new Uint8Array(5).fill(9)];
    await server.readInto([h.copyDescriptor([size], [1], 1), small.copyDescriptor([5], [1], 1)], 0, into);
    assert.deepEqual(into[0], bytes);
    assert.deepEqual([...into[1]!], [1, 2, 3, 4, 5]);
    // A length that differs is refused, and nothing is written.
    const short = new Uint8Array(4);
    await assert.rejects(() => server.readInto([small.copyDescriptor([5], [1], 1)], 0, [short]), RangeError);
    assert.deepEqual([...short], [0, 0, 0, 0]);
  });
});
