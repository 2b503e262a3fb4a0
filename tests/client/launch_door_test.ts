/**
 * Contract under test: a launch that WebGPU would reject at submit (where it
 * drops the whole command buffer, so every launch queued with it is lost) is
 * refused at the call instead, with a typed error naming the kernel, the
 * binding and what was given and needed, and the launches queued around it
 * run: info words shorter than the struct they take, a buffer shorter than
 * its binding's WGSL type, and a kernel that needs more storage or uniform
 * buffers than the device has. A `var<uniform>` taking info words binds as a
 * uniform buffer, so it does not count toward the storage-buffer limit.
 */

import assert from "node:assert/strict";
import { createClient, defineKernel, ResourceLimitError } from "../../mod.ts";
import { incKernel, readU32 } from "../_gpu.ts";
import { clientTest } from "../_clients.ts";

/** x[0] = p.a + p.b + p.c + p.d: the info binding is a uniform struct of four u32 (16 bytes). */
const four = defineKernel({
  name: "four-fields",
  wgsl: `struct P { a: u32, b: u32, c: u32, d: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(1) fn main() { x[0] = p.a + p.b + p.c + p.d; }`,
});

clientTest(
  "info words shorter than the kernel's info struct are refused at launch, and no other launch is lost",
  async (client) => {
    const x = client.create(new Uint32Array([0, 0]));
    const y = client.create(new Uint32Array([5]));
    client.launch(incKernel, [1], [y]);
    assert.throws(() => client.launch(four, [1], [x], new Uint32Array([1])), (e: unknown) => {
      assert.ok(e instanceof RangeError, String(e));
      assert.match((e as Error).message, /four-fields/);
      assert.match((e as Error).message, /binding "p"/);
      assert.match((e as Error).message, /needs 4 words \(16 B\), and the launch gives 1/);
      return true;
    });
    client.launch(incKernel, [1], [y]);
    client.launch(four, [1], [x], new Uint32Array([1, 2, 3, 4]));
    assert.deepEqual([...await readU32(client, y)], [7], "the launches before and after the refused one ran");
    assert.deepEqual([...await readU32(client, x)], [10, 0]);
  },
);

clientTest("a buffer shorter than its binding's WGSL type is refused at launch, naming the binding", async (client) => {
  const wide = defineKernel({
    name: "vec4-out",
    wgsl: `@group(0) @binding(0) var<storage, read_write> v: array<vec4u>;
@compute @workgroup_size(1) fn main() { v[0] = vec4u(1u, 2u, 3u, 4u); }`,
  });
  assert.deepEqual(wide.layout.bindingSizes, [16]);
  const small = client.create(new Uint32Array([9]));
  assert.throws(
    () => client.launch(wide, [1], [small]),
    /buffer 0: binding "v" needs at least 16 B by its WGSL type, and the buffer has 4 B/,
  );
  const big = client.create(new Uint32Array(4));
  client.launch(wide, [1], [big]);
  assert.deepEqual([...await readU32(client, big)], [1, 2, 3, 4]);
  // What is bound is the view rounded up to a word, or the 256-byte scratch for an empty view.
  const bytes = client.create(new Uint8Array(32));
  assert.throws(() => client.launch(wide, [1], [bytes.view(0, 20)]), /needs at least 16 B .* the buffer has 12 B/);
  client.launch(wide, [1], [bytes.view(0, 19)]); // 13 bytes bind as 16
  client.launch(wide, [1], [bytes.view(0, 32)]); // none: the scratch binds
  assert.deepEqual([...await readU32(client, bytes)], [1, 2, 3, 4, 0, 0, 0, 0]);
});

/** A kernel of `storage` storage buffers, plus a uniform `u` bound last: out[0] = sum of each buffer's first word + u. */
function manyBuffers(storage: number): ReturnType<typeof defineKernel> {
  const decls = Array.from(
    { length: storage },
    (_, i) => `@group(0) @binding(${i}) var<storage, read_write> b${i}: array<u32>;`,
  ).join("\n");
  const sum = Array.from({ length: storage }, (_, i) => `b${i}[0]`).join(" + ");
  return defineKernel({
    name: `${storage}-storage-1-uniform`,
    wgsl: `${decls}\n@group(0) @binding(${storage}) var<uniform> u: u32;
@compute @workgroup_size(1) fn main() { b0[0] = ${sum} + u; }`,
  });
}

Deno.test("a shader of 8 storage buffers and a uniform runs on a device with default limits: the uniform binds as a uniform", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice({ label: "default-limits device" }); // maxStorageBuffersPerShaderStage 8
  assert.equal(device.limits.maxStorageBuffersPerShaderStage, 8);
  const client = await createClient({ device });
  try {
    const kernel = manyBuffers(8);
    const buffers = Array.from({ length: 8 }, (_, i) => client.create(new Uint32Array([i + 1])));
    client.launch(kernel, [1], buffers, new Uint32Array([100]));
    assert.deepEqual([...await client.read(buffers[0]!, Uint32Array)], [1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 100]);
    // Bound to a handle, the uniform is storage (pooled memory): nine storage buffers, refused at the call.
    const u = client.create(new Uint32Array([100]));
    assert.throws(() => client.launch(kernel, [1], [...buffers, u]), (e: unknown) => {
      assert.ok(e instanceof ResourceLimitError, String(e));
      assert.equal(e.limit, "bindings");
      assert.deepEqual([e.requested, e.max], [[9], [8]]);
      assert.match(e.message, /maxStorageBuffersPerShaderStage/);
      assert.match(e.message, /pass its contents as info words/);
      return true;
    });
    client.launch(kernel, [1], buffers, new Uint32Array([1000]));
    assert.equal((await client.read(buffers[0]!, Uint32Array))[0], 136 + (2 + 3 + 4 + 5 + 6 + 7 + 8) + 1000);
  } finally {
    client.destroy();
    device.destroy();
  }
});

clientTest("info words for a uniform above maxUniformBufferBindingSize are refused at launch", (client) => {
  const max = client.properties.limits.maxUniformBufferBindingSize!;
  const k = defineKernel({
    name: "uniform-array",
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<uniform> u: array<vec4u, 4>;
@compute @workgroup_size(1) fn main() { x[0] = u[3].w; }`,
  });
  const x = client.create(new Uint32Array(1));
  assert.throws(
    () => client.launch(k, [1], [x], new Uint32Array(max / 4 + 4)),
    (e: unknown) => e instanceof ResourceLimitError && /maxUniformBufferBindingSize/.test(e.message),
  );
});
