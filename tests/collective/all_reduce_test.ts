/**
 * Contract under test: `client.allReduce` and `syncCollective` over logical
 * devices of one adapter (each a separate `GPUDevice`), checked against a
 * CPU reference: CubeCL's test on 2, 3 and 4 devices, every element type and
 * reduction on the host and on the device, chained in-place calls, and the
 * source read as the work queued before the call left it.
 */

import assert from "node:assert/strict";
import { closeDevices, type ComputeClient, createClient, defineKernel, type Handle } from "../../mod.ts";
import { reduceGrid, reduceKernel } from "../../src/collective/reduce_kernels.ts";

async function openDevices(n: number): Promise<ComputeClient[]> {
  return await Promise.all(Array.from({ length: n }, (_, i) => createClient({ deviceIndex: i })));
}

for (const n of [2, 3, 4]) {
  Deno.test(`CubeCL's all-reduce on ${n} devices: buffer j of every device reads Σi + j·n after syncCollective`, async () => {
    const clients = await openDevices(n);
    try {
      const ids = clients.map((c) => c.deviceId.index);
      // Device i holds 8 buffers of 100 f32, buffer j filled with i + j.
      const buffers = clients.map((c, i) =>
        Array.from({ length: 8 }, (_, j) => c.create(new Float32Array(100).fill(i + j)))
      );
      clients.forEach((c, i) => {
        for (const h of buffers[i]!) c.allReduce(h, h, { dtype: "f32", op: "sum", devices: ids });
      });
      await Promise.all(clients.map((c) => c.syncCollective()));
      const sumOfIndices = ids.reduce((a, b) => a + b, 0);
      for (const [i, c] of clients.entries()) {
        const values = await c.readMany(buffers[i]!, Float32Array);
        values.forEach((v, j) =>
          assert.deepEqual([...v], new Array(100).fill(sumOfIndices + j * n), `device ${i} buffer ${j}`)
        );
      }
    } finally {
      await closeDevices();
    }
  });
}

type Dtype = "f32" | "i32" | "u32" | "f16";
type Op = "sum" | "mean" | "max" | "min";
const ARRAYS = { f32: Float32Array, i32: Int32Array, u32: Uint32Array, f16: Float16Array } as const;

/** Rank-order reference with the device's rounding (each store rounds to the element type). */
function reference(inputs: ArrayLike<number>[], dtype: Dtype, op: Op): number[] {
  const out = new ARRAYS[dtype](inputs[0]!.length);
  out.set(inputs[0]!);
  for (const x of inputs.slice(1)) {
    for (let k = 0; k < out.length; k++) {
      out[k] = op === "max" ? Math.max(out[k]!, x[k]!) : op === "min" ? Math.min(out[k]!, x[k]!) : out[k]! + x[k]!;
    }
  }
  if (op === "mean") {
    for (let k = 0; k < out.length; k++) {
      const q = out[k]! / inputs.length;
      out[k] = dtype === "i32" ? Math.trunc(q) : dtype === "u32" ? Math.floor(q) : q;
    }
  }
  return [...out];
}

/** A handle's elements as numbers. */
async function readAs(c: ComputeClient, h: Handle, dtype: Dtype): Promise<number[]> {
  const b = await c.read(h);
  return [...new ARRAYS[dtype](b.buffer, b.byteOffset, b.byteLength / ARRAYS[dtype].BYTES_PER_ELEMENT)];
}

Deno.test("every element type and reduction, on the host and on the device, matches the CPU reference on 3 devices", async () => {
  const clients = await openDevices(3);
  try {
    const len = 777; // not a multiple of the workgroup size
    for (const dtype of ["f32", "i32", "u32", "f16"] as const) {
      for (const op of ["sum", "mean", "max", "min"] as const) {
        for (const reduceOn of dtype === "f16" ? ["host"] as const : ["host", "device"] as const) {
          const T = ARRAYS[dtype];
          const inputs = clients.map((_, i) => {
            const a = new T(len);
            for (let k = 0; k < len; k++) {
              const v = (k * 7919 + i * 104729) % 2001;
              a[k] = dtype === "u32" ? v * 1_000_003 : dtype === "i32" ? (v - 1000) * 1_000_003 : (v - 1000) / 8;
            }
            return a;
          });
          const src = clients.map((c, i) => c.create(inputs[i]!));
          const dst = clients.map((c) => c.empty(len * T.BYTES_PER_ELEMENT));
          // Devices in any order name the same communicator.
          const done = clients.map((c, i) =>
            c.allReduce(src[i]!, dst[i]!, { dtype, op, devices: [2, 0, 1], reduceOn })
          );
          await Promise.all(done);
          const want = reference(inputs, dtype, op);
          for (const [i, c] of clients.entries()) {
            assert.deepEqual(await readAs(c, dst[i]!, dtype), want, `${dtype} ${op} on the ${reduceOn}, device ${i}`);
            assert.deepEqual(await readAs(c, src[i]!, dtype), [...inputs[i]!], "the source is left as it was");
          }
        }
      }
    }
  } finally {
    await closeDevices();
  }
});

Deno.test("chained in-place all-reduces of one buffer each see the previous result", async () => {
  const clients = await openDevices(2);
  try {
    const hs = clients.map((c, i) => c.create(new Int32Array([i + 1, 10 * (i + 1)])));
    for (let round = 0; round < 3; round++) {
      clients.forEach((c, i) => c.allReduce(hs[i]!, hs[i]!, { dtype: "i32", devices: [0, 1] }));
    }
    await Promise.all(clients.map((c) => c.syncCollective()));
    // [1,10] + [2,20] = [3,30]; then doubled twice.
    for (const [i, c] of clients.entries()) assert.deepEqual([...await c.read(hs[i]!, Int32Array)], [12, 120]);
  } finally {
    await closeDevices();
  }
});

const addOne = defineKernel({
  name: "add-one",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] + 1u; }
}`,
});

for (const reduceOn of ["host", "device"] as const) {
  Deno.test(`an all-reduce on the ${reduceOn} reads its sources as the launches queued before the call left them`, async () => {
    const clients = await openDevices(2);
    try {
      const src = clients.map((c) => c.create(new Uint32Array(64).fill(10)));
      const dst = clients.map((c) => c.empty(256));
      clients.forEach((c, i) => c.launch(addOne, [1], [src[i]!])); // 11 before the call
      const done = clients.map((c, i) => c.allReduce(src[i]!, dst[i]!, { dtype: "u32", devices: [0, 1], reduceOn }));
      clients.forEach((c, i) => c.launch(addOne, [1], [src[i]!])); // 12 after it
      await Promise.all(done);
      for (const [i, c] of clients.entries()) {
        assert.deepEqual([...await c.read(dst[i]!, Uint32Array)], new Array(64).fill(22));
        assert.deepEqual([...await c.read(src[i]!, Uint32Array)], new Array(64).fill(12));
      }
    } finally {
      await closeDevices();
    }
  });
}

Deno.test("the device reduction kernel covers every element when its workgroups span several rows", async () => {
  await using client = await createClient();
  const count = 1000;
  const [x, y] = reduceGrid(count, 2); // 4 workgroups of 256 as 2 × 2
  assert.deepEqual([x, y], [2, 2]);
  const a = Uint32Array.from({ length: count }, (_, k) => k);
  const b = Uint32Array.from({ length: count }, (_, k) => 3 * k + 1);
  using ha = client.create(a);
  using hb = client.create(b);
  using out = client.empty(count * 4);
  client.launch(reduceKernel("u32", "sum"), [x, y], [ha, hb, out], new Uint32Array([count, 1]));
  assert.deepEqual([...await client.read(out, Uint32Array)], Array.from({ length: count }, (_, k) => 4 * k + 1));
});
