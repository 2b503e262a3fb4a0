/**
 * Contract under test: device-side failures (validation errors, out of
 * memory, uncaptured errors) are routed to the right stream's error queue and
 * raised at its next draining call, naming the kernel when there is one; the
 * stream is unhealthy until drained and healthy afterwards, and other streams
 * are not affected.
 */

import assert from "node:assert/strict";
import { CompilationError, DeviceValidationError, IoError, LaunchError, ServerUnhealthyError } from "../../mod.ts";
import { incKernel, plusOneKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("an uncaptured device error lands on the stream that acted last and is raised by its next sync", async () => {
  await withClient(async (client) => {
    const a = client.onStream(1);
    const b = client.onStream(2);
    const x = a.create(new Uint32Array(16));
    const y = b.create(new Uint32Array(16));
    b.launch(incKernel, [1], [y]); // stream 2 acted last
    client.server.device.createBuffer({ label: "deliberately invalid", size: 16, usage: 0 }); // outside any scope
    await assert.rejects(() => b.sync(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      assert.equal(e.stream, 2);
      assert.ok(e.errors[0] instanceof DeviceValidationError);
      assert.match(e.errors[0].message, /deliberately invalid|usage/i);
      return true;
    });
    await a.sync(); // stream 1 is healthy
    await b.sync(); // stream 2 is healthy again once drained
    assert.deepEqual([...(await readU32(b, y)).slice(0, 2)], [1, 1]);
    assert.deepEqual([...(await readU32(a, x)).slice(0, 2)], [0, 0]);
  });
});

Deno.test("an out-of-memory allocation is reported as IoError out-of-memory at the stream's next drain", async () => {
  await withClient(async (client) => {
    const stream = client.server.stream(0);
    stream.storage.faults.outOfMemory = 1; // the next device buffer reports out of memory
    const h = client.empty(3 * 1024 * 1024); // needs a new page
    await assert.rejects(() => client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      const io = e.errors[0];
      assert.ok(io instanceof IoError && io.kind === "out-of-memory");
      assert.match(io.message, /out of memory/);
      return true;
    });
    await client.flush(); // drained: healthy
    h.release();
    const ok = client.create(new Uint32Array([7, 8]));
    assert.deepEqual([...await readU32(client, ok)], [7, 8]);
  });
});

Deno.test("a launch on released-then-reused memory cannot happen: stale bindings are refused, queued as LaunchError io", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(4));
    const binding = { memory: x.memory, offsetStart: 0, offsetEnd: 0, stream: 0, size: 16 };
    x.release();
    client.empty(16); // takes the freed slice
    client.server.launch(incKernel, { kind: "static", x: 1, y: 1, z: 1 }, { buffers: [binding] }, "execute", 0);
    await assert.rejects(() => client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      const err = e.errors[0];
      assert.ok(err instanceof LaunchError && err.kind === "io" && err.kernel === "inc");
      assert.match(err.message, /inc: binding 0: .*was released/); // reported as released, whatever became of its slice
      return true;
    });
  });
});

Deno.test("a compile error names the kernel, and the stream stays unhealthy only until it is drained", async () => {
  await withClient(async (client) => {
    const { defineKernel } = await import("../../mod.ts");
    const bad = defineKernel({ name: "typo", wgsl: "@compute @workgroup_size(1) fn main() { undefined_call(); }" });
    client.launch(bad, [1], []);
    const x = client.create(new Uint32Array(4));
    client.launch(incKernel, [1], [x]); // queued errors do not block later launches
    await assert.rejects(() => client.read(x), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      assert.ok(e.errors[0] instanceof CompilationError && e.errors[0].kernel === "typo");
      return true;
    });
    assert.deepEqual([...await readU32(client, x)], [1, 1, 1, 1]);
    await client.sync();
  });
});

Deno.test("500 flushes issued without yielding all settle, and a compile error among them is raised by exactly one", async () => {
  await withClient(async (client) => {
    const { defineKernel } = await import("../../mod.ts");
    const bad = defineKernel({ name: "typo2", wgsl: "@compute @workgroup_size(1) fn main() { undefined_call(); }" });
    const x = client.create(new Uint32Array(4));
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 500; i++) {
      client.launch(i === 250 ? bad : incKernel, [1], [x]);
      flushes.push(client.flush());
    }
    const outcomes = await Promise.allSettled(flushes);
    const rejected = outcomes.flatMap((o) => o.status === "rejected" ? [o.reason] : []);
    assert.equal(rejected.length, 1, "one flush raises the queued error, the others find the queue empty");
    assert.ok(rejected[0] instanceof ServerUnhealthyError);
    assert.ok(rejected[0].errors[0] instanceof CompilationError && rejected[0].errors[0].kernel === "typo2");
    assert.deepEqual([...await readU32(client, x)], [499, 499, 499, 499]);
    await client.sync();
  });
});

Deno.test("a batch that fails validation at submit says which work did not run: its commands and their kernels", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(16));
    const y = client.create(new Float32Array(16));
    const z = client.empty(64);
    client.launch(incKernel, [1], [x]);
    client.launch(plusOneKernel, [1], [y, z]);
    client.launch(incKernel, [1], [x]);
    // Stands for a failure only the device can see: the page's GPUBuffer is gone under the runtime.
    x.memory.slice!.page.storage.resource!.destroy();
    await assert.rejects(() => client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      const err = e.errors.find((x) => x instanceof DeviceValidationError);
      assert.ok(err, String(e));
      assert.match(err.message, /none of the batch's 3 commands ran \(kernels: inc, plus-one\)/);
      return true;
    });
  });
});
