/**
 * Contract under test: bad input at the client and server doors throws at
 * once, with a typed error whose message names the value and the limit, and
 * leaves the runtime fully usable.
 */

import assert from "node:assert/strict";
import {
  createClient,
  defineKernel,
  PoolConfigError,
  ProfileError,
  ResourceLimitError,
  ServerUnhealthyError,
} from "../../mod.ts";
import { addKernel, incKernel, readU32, withClient } from "../_gpu.ts";
import { CLIENT_KINDS, clientOf, clientTest, end, inProcess } from "../_clients.ts";
import type { Kernel } from "../../mod.ts";

clientTest(
  "allocation sizes: negative, fractional, non-numeric and over maxBufferSize are refused by name",
  async (client) => {
    for (const bad of [-1, 1.5, NaN, Infinity, "16", null, 2 ** 60]) {
      assert.throws(() => client.empty(bad as number), (e: unknown) => {
        assert.ok(e instanceof RangeError || e instanceof ResourceLimitError, String(e));
        assert.match((e as Error).message, /size|maxBufferSize/);
        return true;
      });
    }
    const max = client.properties.memory.maxBufferSize;
    assert.throws(
      () => client.empty(max + 1),
      (e: unknown) => e instanceof ResourceLimitError && /maxBufferSize/.test(e.message) && e.max[0] === max,
    );
    assert.throws(() => client.create(42 as unknown as Uint8Array), TypeError);
    assert.throws(() => client.staging([-4]), RangeError);
    if (inProcess(client)) {
      assert.throws(() => client.server.initializeMemory(client.empty(4).memory, 4, 0), /already initialized/);
    }
    // Still usable.
    const x = client.create(new Uint32Array([1, 2, 3]));
    assert.deepEqual([...await readU32(client, x)], [1, 2, 3]);
  },
);

clientTest(
  "launch arguments: counts, bindings, info and mode are checked against the kernel and the device",
  async (client) => {
    const x = client.create(new Uint32Array(64));
    const max = client.properties.hardware.maxCubeCount[0];
    const bad: [unknown, unknown, unknown, unknown, RegExp][] = [
      [[max + 1], [x], undefined, undefined, /maxComputeWorkgroupsPerDimension/],
      [[1, 1, max + 1], [x], undefined, undefined, /maxComputeWorkgroupsPerDimension/],
      [[], [x], undefined, undefined, /1 to 3 entries/],
      [[1, 2, 3, 4], [x], undefined, undefined, /1 to 3 entries/],
      [[-1], [x], undefined, undefined, /non-negative integers/],
      [[0.5], [x], undefined, undefined, /non-negative integers/],
      [{ kind: "static", x: 1, y: -2, z: 1 }, [x], undefined, undefined, /non-negative integers/],
      ["1", [x], undefined, undefined, /count must be/],
      [[1], "x", undefined, undefined, /buffers must be an array/],
      [[1], [], undefined, undefined, /declares 1 bindings/],
      [[1], [x, x], undefined, undefined, /declares 1 bindings/],
      [[1], [{}], undefined, undefined, /expected a Handle/],
      [[1], [x], new Float64Array(2), undefined, /info must be/],
      [[1], [x], undefined, { mode: "fast" }, /mode must be/],
    ];
    for (const [count, buffers, info, options, re] of bad) {
      assert.throws(
        () => client.launch(incKernel, count as never, buffers as never, info as never, options as never),
        re,
      );
    }
    assert.throws(() => client.launch(null as unknown as Kernel, [1], [x]), /defineKernel/);
    const small = client.create(new Uint32Array(2));
    assert.throws(() => client.launch(incKernel, small, [x]), /needs 12 bytes/);
    // Bindings above maxStorageBufferBindingSize are refused by name.
    const maxBinding = client.properties.memory.maxPageSize;
    if (maxBinding + 4 <= client.properties.memory.maxBufferSize && maxBinding <= 256 * 1024 * 1024) {
      const side = client.onStream(5);
      await side.installMemoryPools({ pools: [{ kind: "direct" }] }); // the default pools stop at the binding limit
      const big = side.empty(maxBinding + 4);
      assert.throws(
        () => client.launch(incKernel, [1], [big]),
        (e: unknown) => e instanceof ResourceLimitError && /maxStorageBufferBindingSize/.test(e.message),
      );
      big.release();
    }
    client.launch(incKernel, [1], [x]);
    assert.equal((await readU32(client, x))[0], 1, "still usable");
  },
);

for (const [ka, kb] of CLIENT_KINDS.flatMap((x) => CLIENT_KINDS.map((y) => [x, y] as const))) {
  Deno.test(`handles: released and foreign handles are refused everywhere, naming the memory [${ka}, foreign ${kb}]`, async () => {
    const a = await clientOf(ka);
    const b = await clientOf(kb);
    try {
      const foreign = b.create(new Uint32Array(4));
      const gone = a.create(new Uint32Array(4));
      gone.release();
      for (const h of [foreign, gone]) {
        const re = h === gone ? /was released/ : /another client's device/;
        assert.throws(() => a.write(h, new Uint32Array(4)), re);
        await assert.rejects(() => a.read(h), re);
        assert.throws(() => a.launch(incKernel, [1], [h]), re);
        assert.throws(() => a.getResource(h), re);
      }
      assert.throws(() => gone.view(0), /was released/);
      const h = a.create(new Uint32Array(4));
      assert.throws(() => h.view(2), /multiple of 4/);
      assert.throws(() => h.view(0, 20), /exceeds/);
      assert.throws(() => h.view(-4), /non-negative/);
      assert.deepEqual([...await readU32(a, h)], [0, 0, 0, 0]);
    } finally {
      await end(a);
      await end(b);
    }
  });
}

Deno.test("server doors: copy descriptors outside their memory, bad streams, graphs, tokens and configurations", async () => {
  await withClient(async (client) => {
    const s = client.server;
    const h = client.create(new Uint32Array(4));
    await assert.rejects(() => s.read([h.copyDescriptor([5], [1], 4)], 0), /covers 20 B but memory \d+ has 16 B/);
    await assert.rejects(() => s.read([h.copyDescriptor([2, 2], [2], 4)], 0), /differ in rank/);
    await assert.rejects(() => s.read([h.copyDescriptor([4], [1], 0)], 0), /elemSize/);
    await assert.rejects(() => s.read("x" as never, 0), /must be an array/);
    assert.throws(() => s.write([[h.copyDescriptor([4], [1], 4), new Uint8Array(12)]], 0), /12 B given/);
    assert.throws(() => s.write([[h.copyDescriptor([8], [1], 4), new Uint8Array(32)]], 0), /covers 32 B/);
    assert.throws(
      () => s.launch({} as Kernel, { kind: "static", x: 1, y: 1, z: 1 }, { buffers: [] }, "execute", 0),
      TypeError,
    );
    for (const bad of [-1, 1.5, NaN]) assert.throws(() => client.onStream(bad), /stream id/);
    assert.throws(() => s.memoryUsage(-3), /stream id/);
    await assert.rejects(() => client.endProfile({ id: -1, stream: 0 }), ProfileError);
    await assert.rejects(() => client.endProfile(null as never), ProfileError);
    assert.throws(() => client.installMemoryPools({ pools: [{ kind: "sliced", pageSize: -1 }] }), PoolConfigError);
    assert.throws(() => client.allocationMode("sometimes" as never), /mode must be/);
    s.replay(424242, 0); // an unknown graph is queued, not thrown
    await assert.rejects(() => client.flush(), ServerUnhealthyError);
    await assert.rejects(() => createClient({ tasksMax: 0 }), /tasksMax/);
    await assert.rejects(() => createClient({ maxStreams: -1 }), /maxStreams/);
    await assert.rejects(() => createClient({ openPassAhead: "yes" as never }), TypeError);
    await assert.rejects(() => createClient({ memory: "huge" as never }), PoolConfigError);
    // Still usable after everything above.
    const out = client.empty(16);
    client.launch(addKernel, [1], [h, h, out], new Uint32Array([4]));
    assert.equal((await client.read(out)).byteLength, 16);
  });
});

Deno.test("defineKernel() and a kernel whose declared bindings do not match are refused before WebGPU sees them", () => {
  assert.throws(() => defineKernel({ name: "k", wgsl: "fn x() {}", entryPoint: "" }), /entryPoint/);
  assert.throws(() => defineKernel({ name: 1 as unknown as string, wgsl: "x" }), /name/);
});

clientTest("messages name the call the user made and the type of what was given", async (client) => {
  assert.throws(() => client.empty("1024" as unknown as number), /empty: size must be .* got the string "1024"/);
  assert.throws(() => client.empty({ size: 4 } as unknown as number), /got an object \{ size \}/);
  const h = client.create(new Uint32Array(4));
  h.release();
  await assert.rejects(() => client.read(h), (e: unknown) => {
    assert.match((e as Error).message, /^read: memory \d+ \(16 B\) was released/);
    return true;
  });
  await assert.rejects(
    () => client.readMany([client.create(new Uint32Array(1)), h]),
    /TypeError: readMany\[1\]: memory/,
  );
  await assert.rejects(
    () => client.read(client.create(new Uint8Array(3)), Float32Array),
    /RangeError: read: 3 B is not a whole number/,
  );
});
