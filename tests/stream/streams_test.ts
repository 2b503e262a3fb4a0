/**
 * Contract under test: streams have their own encoders and memory but share
 * one queue, and the runtime keeps every ordering a program can observe:
 * cross-stream producers are submitted before their consumers, writes never
 * overtake queued work that reads the memory, cross-stream bindings stay
 * pinned until the consuming work has completed, and reads and syncs cost one
 * completion wait.
 */

import assert from "node:assert/strict";
import { defineKernel, type Handle } from "../../mod.ts";
import { axpbInfo, axpbKernel, incKernel, readF32, readU32, rng, withClient } from "../_gpu.ts";

const copyKernel = defineKernel({
  name: "copy",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x]; }
}`,
});

/** y = x * 1.0 + 1.0: one link of a dependent chain. */
const plusOne = (n: number) => axpbInfo(n, 1, 1);

Deno.test("two streams writing, launching and reading interleaved produce exactly the CPU reference", async () => {
  await withClient(async (client) => {
    const streams = [client.onStream(1), client.onStream(2)];
    const n = 300;
    const r = rng(7);
    const model = streams.map(() => new Float32Array(n));
    const handles = streams.map((s, i) => s.create(model[i]!));
    const tmp = streams.map((s) => s.empty(n * 4));
    for (let step = 0; step < 40; step++) {
      const i = step % 2;
      const s = streams[i]!;
      const action = Math.floor(r() * 3);
      if (action === 0) {
        const data = Float32Array.from({ length: n }, () => Math.round(r() * 100));
        s.write(handles[i]!, data);
        model[i]!.set(data);
      } else {
        const k = Math.round(r() * 4);
        const c = Math.round(r() * 10);
        s.launch(axpbKernel, [Math.ceil(n / 64)], [handles[i]!, tmp[i]!], axpbInfo(n, k, c));
        s.launch(axpbKernel, [Math.ceil(n / 64)], [tmp[i]!, handles[i]!], axpbInfo(n, 1, 0));
        model[i] = model[i]!.map((v) => Math.fround(Math.fround(v * k) + c));
      }
      if (step % 7 === 6) {
        const got = await Promise.all(streams.map((s, j) => readF32(s, handles[j]!)));
        got.forEach((g, j) => assert.deepEqual(g, model[j], `stream ${j + 1} at step ${step}`));
      }
    }
    const got = await Promise.all(streams.map((s, j) => readF32(s, handles[j]!)));
    got.forEach((g, j) => assert.deepEqual(g, model[j]));
  });
});

Deno.test("a consumer stream sees a producer stream's 300-launch chain without an explicit sync", async () => {
  await withClient(async (client) => {
    const producer = client.onStream(10000);
    const consumer = client.onStream(10001);
    const n = 64;
    let cur: Handle = producer.create(new Float32Array(n).fill(1)); // bytes: `empty` handles take its place
    for (let i = 0; i < 300; i++) {
      const next = producer.empty(n * 4);
      producer.launch(axpbKernel, [1], [cur, next], plusOne(n));
      cur.release();
      cur = next;
    }
    // The consumer binds producer memory: the producer's queued work is submitted first.
    const out = consumer.empty(n * 4);
    consumer.launch(axpbKernel, [1], [cur, out], axpbInfo(n, 2, 0));
    assert.ok((await readF32(consumer, out)).every((v) => v === 602));
    // And a read from another stream is ordered after the owner's work too.
    producer.launch(axpbKernel, [1], [cur, cur], plusOne(n));
    assert.ok((await readF32(consumer, cur)).every((v) => v === 302));
  });
});

Deno.test("a write never overtakes queued launches that read the old contents, on the same or another stream", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(128).fill(5));
    const y = client.empty(512);
    client.launch(copyKernel, [2], [x, y]); // queued, not submitted
    client.write(x, new Uint32Array(128).fill(9));
    assert.ok((await readU32(client, y)).every((v) => v === 5), "the launch saw the old contents");
    assert.ok((await readU32(client, x)).every((v) => v === 9));

    const other = client.onStream(3);
    const z = other.empty(512);
    other.launch(copyKernel, [2], [x, z]); // stream 3 queues a read of stream 0's memory
    client.write(x, new Uint32Array(128).fill(11)); // stream 0 writes it
    assert.ok((await readU32(other, z)).every((v) => v === 9), "the other stream's launch ran first");
    assert.ok((await readU32(client, x)).every((v) => v === 11));
  });
});

Deno.test("launches on a stream that binds memory another stream still writes run after that stream's work", async () => {
  await withClient(async (client) => {
    const a = client.onStream(1);
    const b = client.onStream(2);
    const x = a.create(new Uint32Array(64));
    for (let i = 0; i < 10; i++) a.launch(incKernel, [1], [x]); // queued on a
    b.launch(incKernel, [1], [x]); // b binds a's memory
    for (let i = 0; i < 10; i++) a.launch(incKernel, [1], [x]); // a again: b's work goes first
    assert.ok((await readU32(b, x)).every((v) => v === 21));
  });
});

Deno.test("a cross-stream binding stays pinned until the consuming work has completed", async () => {
  await withClient(async (client) => {
    const owner = client.onStream(1);
    const consumer = client.onStream(2);
    const x = owner.create(new Uint32Array(64).fill(3));
    const y = consumer.empty(256);
    await owner.sync();
    consumer.launch(copyKernel, [1], [x, y]);
    const slice = x.memory.slice;
    x.release();
    const z = owner.empty(256);
    assert.notEqual(z.memory.slice, slice, "the pinned slice is not reused while the consumer's work is pending");
    await consumer.sync(); // the consuming submission has completed
    const w = owner.empty(256);
    assert.equal(w.memory.slice, slice, "released once the work completed");
    assert.ok((await readU32(consumer, y)).every((v) => v === 3));
  });
});

Deno.test("reads requested in the same tick share one submit, one staging buffer and one map", async () => {
  await withClient(async (client) => {
    const hs = Array.from({ length: 8 }, (_, i) => client.create(new Uint32Array(16).fill(i)));
    client.launch(incKernel, [1], [hs[0]!]);
    await client.sync();
    const queue = client.server.device.queue;
    const submit = queue.submit;
    const proto = GPUBuffer.prototype;
    const mapAsync = proto.mapAsync;
    let submits = 0;
    let resolved = 0;
    const resolvedAtCall: number[] = [];
    queue.submit = function (this: GPUQueue, cbs: GPUCommandBuffer[]) {
      submits++;
      return submit.call(this, cbs);
    };
    proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
      resolvedAtCall.push(resolved);
      return mapAsync.apply(this, args).then((v) => {
        resolved++;
        return v;
      });
    };
    try {
      hs.forEach((h) => client.launch(incKernel, [1], [h]));
      const all = await Promise.all(hs.map((h) => readU32(client, h)));
      all.forEach((v, i) => assert.ok(v.every((x) => x === i + 1 + (i === 0 ? 1 : 0))));
      assert.equal(submits, 1, "one submit for the launches and every copy");
      assert.equal(resolvedAtCall.length, 1, "the batch's reads share one staging buffer and one map");
    } finally {
      queue.submit = submit;
      proto.mapAsync = mapAsync;
    }
  }, { fastReads: false }); // the spec path's accounting (fast reads: fast_reads_test.ts)
});

Deno.test("sync() submits once and waits once", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(16));
    const queue = client.server.device.queue;
    const done = queue.onSubmittedWorkDone;
    let waits = 0;
    queue.onSubmittedWorkDone = function (this: GPUQueue) {
      waits++;
      return done.call(this);
    };
    try {
      for (let i = 0; i < 5; i++) client.launch(incKernel, [1], [x]);
      await client.sync();
      assert.equal(waits, 1);
    } finally {
      queue.onSubmittedWorkDone = done;
    }
    assert.ok((await readU32(client, x)).every((v) => v === 5));
  }, { fastReads: false }); // the spec path's accounting (fast reads: fast_reads_test.ts)
});

Deno.test("tasksMax bounds the dispatches per submit", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(16));
    client.launch(incKernel, [1], [x], undefined, { mode: "skip" }); // compile and validate first
    await client.sync();
    const queue = client.server.device.queue;
    const submit = queue.submit;
    let submits = 0;
    queue.submit = function (this: GPUQueue, cbs: GPUCommandBuffer[]) {
      submits++;
      return submit.call(this, cbs);
    };
    try {
      for (let i = 0; i < 35; i++) client.launch(incKernel, [1], [x]);
      assert.equal(submits, 3, "35 launches with tasksMax 10 submit at 10, 20 and 30");
      await client.flush();
      assert.equal(submits, 4);
    } finally {
      queue.submit = submit;
    }
    assert.ok((await readU32(client, x)).every((v) => v === 35));
  }, { tasksMax: 10 });
});

Deno.test("uploads above the chunk threshold are split with a submit after each chunk", async () => {
  await withClient(async (client) => {
    const size = 20 * 1024 * 1024 + 12;
    const data = new Uint8Array(size);
    for (let i = 0; i < size; i += 4093) data[i] = (i / 4093) & 255;
    const queue = client.server.device.queue;
    const write = queue.writeBuffer;
    let writes = 0;
    queue.writeBuffer = function (this: GPUQueue, ...args: Parameters<GPUQueue["writeBuffer"]>) {
      writes++;
      return write.apply(this, args);
    };
    let h;
    try {
      h = client.create(data);
    } finally {
      queue.writeBuffer = write;
    }
    assert.equal(writes, Math.ceil(size / (4 * 1024 * 1024)));
    const back = await client.read(h);
    assert.ok(back.every((v, i) => v === data[i]));
  });
});
