/**
 * Contract under test: launches of kernels whose validation is still pending
 * are held and then submitted together, in order, with a failed kernel's
 * launches dropped (and reported) and every other launch executed, also when
 * something forces a submit before the validations are known.
 */

import assert from "node:assert/strict";
import { CompilationError, defineKernel, ServerUnhealthyError } from "../../mod.ts";
import { countSubmits, readU32, withClient } from "../_gpu.ts";

const addOne = () =>
  defineKernel({
    name: `add-one-${crypto.randomUUID().slice(0, 8)}`,
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&x)) { x[g.x] += 1u; } }`,
  });
const timesTwo = () =>
  defineKernel({
    name: `times-two-${crypto.randomUUID().slice(0, 8)}`,
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&x)) { x[g.x] *= 2u; } }`,
  });
const broken = () =>
  defineKernel({
    name: `broken-${crypto.randomUUID().slice(0, 8)}`,
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 0.5; }`,
  });

Deno.test("the first launches of new kernels are held, then submitted in one batch, in order", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64).fill(1));
    await client.sync();
    const [a, b] = [addOne(), timesTwo()];
    const spy = countSubmits(client.server.device);
    try {
      for (let i = 0; i < 100; i++) {
        client.launch(a, [1], [x]);
        client.launch(b, [1], [x]);
      }
      assert.ok(client.server.stream(0).holding);
      await client.flush();
      assert.equal(spy.count(), 1, "200 launches of two new kernels in one submit");
    } finally {
      spy.restore();
    }
    let want = 1;
    for (let i = 0; i < 100; i++) want = ((want + 1) * 2) >>> 0;
    assert.ok((await readU32(client, x)).every((v) => v === want));
  });
});

Deno.test("a new kernel that fails to compile drops only its own held launches", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const [a, bad] = [addOne(), broken()];
    for (let i = 0; i < 5; i++) {
      client.launch(a, [1], [x]);
      client.launch(bad, [1], [x]);
    }
    client.write(x, new Uint32Array(64).fill(10)); // held too, in order
    client.launch(a, [1], [x]);
    await assert.rejects(() => client.read(x), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      assert.equal(e.errors.length, 5);
      assert.ok(e.errors.every((x) => x instanceof CompilationError));
      return true;
    });
    assert.ok((await readU32(client, x)).every((v) => v === 11));
  });
});

Deno.test("a submit forced before validation is known isolates pending kernels and keeps order", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const [a, bad] = [addOne(), broken()];
    client.launch(a, [1], [x]);
    client.launch(bad, [1], [x]);
    client.launch(a, [1], [x]);
    // Another stream binds x now: this stream's held work must be submitted first, before any validation is known.
    const other = client.onStream(2);
    const b = timesTwo();
    other.launch(b, [1], [x]);
    assert.equal(client.server.stream(0).holding, false, "the forced submit released the held work");
    await assert.rejects(() => client.flush(), ServerUnhealthyError);
    assert.ok((await readU32(other, x)).every((v) => v === 4), "(0 + 1 + 1) * 2: order kept, the valid launches ran");
  });
});
