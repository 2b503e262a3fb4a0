/**
 * Contract under test: the shaders real WebGPU clients generate run through
 * the runtime unchanged and compute what they computed on raw WebGPU, byte
 * for byte.
 *
 * The corpus (`corpus.json.gz`, `corpus.bin.gz`, made by
 * `bench/capture_conformance.ts`) holds the compute dispatches that ONNX
 * Runtime Web 1.31.1 submitted through its two WebGPU execution providers
 * (the native one, "webgpu", and the JavaScript one, "jsep") for about a
 * hundred small ONNX models, and that TensorFlow.js 4.22.0's WebGPU backend
 * ("tfjs") submitted for 72 small ops: each dispatch's WGSL, entry point,
 * constants, bindings (group, binding, uniform / storage / read-only
 * storage), workgroup count, and the bytes of every bound range before and
 * after it. The capture replayed every one on raw WebGPU to the same
 * after-bytes, and checked each case's outputs against the client's CPU
 * backend (so no invocation met llvmpipe's loop limit).
 *
 * Here each dispatch goes through the runtime as a user would write it:
 * `defineKernel` of the WGSL, `create` of every binding from its before-bytes
 * (exact sizes), `launch` with the handles in (group, binding) order and no
 * info words, `readMany` of every binding, and a byte-for-byte comparison with
 * the after-bytes. On the capture's adapter (same description and features)
 * every dispatch must be exact. Elsewhere a dispatch that records a tolerance
 * (ops whose rounding WGSL leaves to the implementation: exp, tanh, division,
 * square roots; the reason is in the corpus) may differ within it in the f32
 * elements of its writable bindings. Dispatches are grouped by operator, one
 * test step each, so a failure names the op, the dispatch and the bytes.
 */

import assert from "node:assert/strict";
import { type ComputeClient, defineKernel, type Handle, type Kernel } from "../../mod.ts";
import { withClient } from "../_gpu.ts";
import { type Corpus, type CorpusDispatch, readCorpus } from "./_corpus.ts";
import { compareDispatch, judge, type Outcome, type Verdict } from "./_compare.ts";

/**
 * Dispatches the runtime is known to get wrong where the device lays out
 * `@align(16)` struct members under `var<storage>` otherwise than WGSL says
 * (Deno 2.9.6's GL backend: `alignKeptInStorage` probes it), by id, with what
 * differs. Each is a tfjs dispatch of a rank-5 or rank-6 tensor: its
 * `var<uniform>` struct declares the shapes as `@align(16) name: vec5` (or
 * `vec6`, structs of i32), the runtime binds it as `var<storage, read>`, and
 * there the GL backend places those members at byte 8 instead of 16, so the
 * shader reads its shapes from the wrong words. Raw WebGPU, binding it as a
 * uniform, gets every one right on GL (`bench/conformance_raw.ts`). Where the
 * probe fails they must still fail, and every other dispatch must pass;
 * elsewhere (Vulkan) they must pass like the rest. Run the suite with
 * `DENO_WEBGPU_BACKEND=gl` to check; empty the list once the runtime keeps
 * such layouts there.
 */
const KNOWN_RUNTIME_FAILURES: Readonly<Record<string, string>> = {
  "tfjs/sub_5d_broadcast/0": "Sub, rank 5: xShape, xShapeStrides, outShape as @align(16) vec5; 41 of 96 result bytes",
  "tfjs/minimum_5d/0": "Minimum, rank 5: @align(16) vec5 shapes; 18 of 96 result bytes",
  "tfjs/mul_6d_broadcast/0": "Mul, rank 6: @align(16) vec6 shapes; 88 of 192 result bytes",
  "tfjs/transpose_5d/0": "Transpose, rank 5: @align(16) vec5 shapes; 40 of 96 result bytes",
  "tfjs/transpose_6d/0": "Transpose, rank 6: @align(16) vec6 shapes; 81 of 192 result bytes",
  "tfjs/slice_5d/0": "Slice, rank 5: @align(16) vec5 start and shapes; 11 of 32 result bytes",
  "tfjs/conv3d/0": "Conv3D: @align(16) vec5 xShape, wShape, outShape; 429 of 768 result bytes",
  "tfjs/max_pool3d/0": "MaxPool3D: @align(16) vec5 shapes; all 64 result bytes (-1e20, the initial max, read)",
  "tfjs/avg_pool3d/0": "AvgPool3D: @align(16) vec5 shapes; 240 of 512 result bytes",
};

const corpus = await readCorpus();
const { dispatches } = corpus.index;

/** One kernel per distinct shader, entry point and constants: dispatches of one program share its pipeline. */
const kernels = new Map<string, Kernel>();
function kernelOf(d: CorpusDispatch): Kernel {
  const key = JSON.stringify([d.shader, d.entryPoint, d.constants]);
  let kernel = kernels.get(key);
  if (kernel === undefined) {
    const source = corpus.index.shaders[d.shader]!;
    kernel = defineKernel({ name: d.id, wgsl: source, entryPoint: d.entryPoint, constants: { ...d.constants } });
    kernels.set(key, kernel);
  }
  return kernel;
}

/** Runs one dispatch through the runtime; resolves with every binding's bytes after it. */
async function replay(client: ComputeClient, corpus: Corpus, d: CorpusDispatch): Promise<Uint8Array[]> {
  const kernel = kernelOf(d);
  const handles: Handle[] = d.bindings.map((b) => client.create(corpus.blob(b.before)));
  try {
    client.launch(kernel, d.workgroups, handles);
    return await client.readMany(handles);
  } finally {
    for (const h of handles) h.release();
  }
}

/** The verdict of one dispatch, a thrown error counting as a difference. */
async function verdictOf(client: ComputeClient, d: CorpusDispatch, exactOnly: boolean): Promise<Verdict> {
  try {
    const after = await replay(client, corpus, d);
    const expected = d.bindings.map((b) => corpus.blob(b.after));
    return compareDispatch(d.bindings, after, expected, exactOnly ? undefined : d.tolerance);
  } catch (e) {
    return { kind: "differs", what: `threw ${e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : e}` };
  }
}

/**
 * Whether raw WebGPU on this adapter places tfjs's uniform shape struct
 * (`@align(16) xShape: vec5`, five i32) at byte 16 when it is bound as
 * storage, as WGSL says and as it does under `var<uniform>`. Deno 2.9.6's GL
 * backend puts it at byte 8 (std430, `@align` ignored), so a runtime that
 * binds uniforms as storage reads the wrong words there.
 */
async function alignKeptInStorage(adapter: GPUAdapter): Promise<boolean> {
  const device = await adapter.requestDevice({ label: "align probe" });
  try {
    const module = device.createShaderModule({
      label: "align probe",
      code: `struct vec5 { x: i32, y: i32, z: i32, w: i32, u: i32 };
struct Uniforms { NAN: f32, INFINITY: f32, @align(16) xShape: vec5, @align(16) xShapeStrides: vec4<i32> };
@group(0) @binding(0) var<storage, read> u: Uniforms;
@group(0) @binding(1) var<storage, read_write> o: array<i32, 2>;
@compute @workgroup_size(1) fn main() { o[0] = u.xShape.x; o[1] = u.xShapeStrides.x; }`,
    });
    const pipeline = device.createComputePipeline({ label: "align probe", layout: "auto", compute: { module } });
    const words = device.createBuffer({
      label: "align probe words",
      size: 64,
      usage: GPUBufferUsage.STORAGE,
      mappedAtCreation: true,
    });
    new Int32Array(words.getMappedRange()).set(Int32Array.from({ length: 16 }, (_, i) => i));
    words.unmap();
    const out = device.createBuffer({
      label: "align probe out",
      size: 8,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    });
    const read = device.createBuffer({
      label: "align probe read",
      size: 8,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    const encoder = device.createCommandEncoder({ label: "align probe" });
    const pass = encoder.beginComputePass({ label: "align probe" });
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.createBindGroup({
        label: "align probe",
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer: words } }, { binding: 1, resource: { buffer: out } }],
      }),
    );
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(out, 0, read, 0, 8);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const [shape, strides] = new Int32Array(read.getMappedRange());
    return shape === 4 && strides === 12;
  } finally {
    device.destroy();
  }
}

const byOp = new Map<string, CorpusDispatch[]>();
for (const d of dispatches) byOp.set(d.op, [...(byOp.get(d.op) ?? []), d]);

Deno.test("the known-failure list names only dispatches of the corpus", () => {
  const ids = new Set(dispatches.map((d) => d.id));
  assert.deepEqual(Object.keys(KNOWN_RUNTIME_FAILURES).filter((id) => !ids.has(id)), []);
});

Deno.test("every dispatch ONNX Runtime Web and TensorFlow.js submitted replays through the runtime to the captured bytes", async (t) => {
  const adapter = await navigator.gpu.requestAdapter();
  assert.ok(adapter, "no WebGPU adapter");
  const features = [...new Set(dispatches.flatMap((d) => d.features))] as GPUFeatureName[];
  const have = features.filter((f) => adapter.features.has(f));
  const exactOnly = adapter.info.description === corpus.index.source.adapter &&
    [...adapter.features].sort().join(",") === corpus.index.source.adapterFeatures;
  const known = await alignKeptInStorage(adapter) ? {} : KNOWN_RUNTIME_FAILURES;
  const counts = { exact: 0, tolerance: 0, known: 0, skipped: 0 };
  await withClient(async (client) => {
    for (const [op, list] of byOp) {
      await t.step(`${op} (${list.length} dispatches)`, async () => {
        const outcomes: Outcome[] = [];
        for (const d of list) {
          if (d.features.every((f) => have.includes(f as GPUFeatureName))) {
            outcomes.push({ id: d.id, program: d.program, verdict: await verdictOf(client, d, exactOnly) });
          } else counts.skipped++;
        }
        const j = judge(outcomes, known);
        counts.exact += j.exact;
        counts.tolerance += j.tolerance;
        counts.known += j.known;
        assert.deepEqual(j.unexpected, [], `${op}: dispatches whose bytes differ from the capture`);
        assert.deepEqual(j.nowPassing, [], `${op}: listed in KNOWN_RUNTIME_FAILURES but now pass: remove them`);
      });
    }
  }, { requiredFeatures: have });
  console.log(
    `conformance: ${dispatches.length} dispatches, ${corpus.index.shaders.length} shaders, ${byOp.size} operators: ` +
      `${counts.exact} exact, ${counts.tolerance} within tolerance, ${counts.known} known runtime failures, ` +
      `${counts.skipped} skipped (feature missing)${exactOnly ? " (capture adapter: exact required)" : ""}`,
  );
});

Deno.test("a listed dispatch that passes and an unlisted one that differs are both reported", () => {
  const differs: Verdict = { kind: "differs", what: "output: 1 of 4 bytes differ" };
  const j = judge([
    { id: "a", program: "Add", verdict: { kind: "exact" } },
    { id: "b", program: "Mul", verdict: differs },
    { id: "c", program: "Exp", verdict: { kind: "tolerance", worstUlps: 2 } },
    { id: "d", program: "Transpose", verdict: differs },
  ], { c: "a struct member at another offset", d: "a struct member at another offset" });
  assert.deepEqual(j.unexpected, ["b (Mul): output: 1 of 4 bytes differ"]);
  assert.deepEqual(j.nowPassing, ["c (Exp)"]);
  assert.deepEqual([j.exact, j.tolerance, j.known], [1, 0, 1]);
});

Deno.test("a corrupted expected byte makes a replayed dispatch's comparison fail", async () => {
  const d = dispatches.find((x) =>
    x.tolerance === undefined && !(x.id in KNOWN_RUNTIME_FAILURES) &&
    x.features.length === 0 && x.bindings.some((b) => b.type === "storage")
  )!;
  await withClient(async (client) => {
    const after = await replay(client, corpus, d);
    const expected = d.bindings.map((b) => corpus.blob(b.after).slice());
    assert.deepEqual(compareDispatch(d.bindings, after, expected, d.tolerance), { kind: "exact" });
    const out = d.bindings.findIndex((b) => b.type === "storage");
    expected[out]![expected[out]!.length - 1]! ^= 0x01;
    const v = compareDispatch(d.bindings, after, expected, d.tolerance);
    assert.equal(v.kind, "differs", `${d.id}: a flipped bit went unnoticed`);
  });
});

Deno.test("a tolerance admits a last-bit difference and refuses a larger one", async () => {
  const d = dispatches.find((x) =>
    x.tolerance !== undefined && x.features.length === 0 &&
    x.bindings.some((b) => b.type === "storage" && b.element === "f32")
  )!;
  await withClient(async (client) => {
    const after = await replay(client, corpus, d);
    const out = d.bindings.findIndex((b) => b.type === "storage" && b.element === "f32");
    const expected = d.bindings.map((b) => corpus.blob(b.after).slice());
    const words = new Float32Array(expected[out]!.buffer);
    const i = words.findIndex((x) => Math.abs(x) > 1e-3);
    const bits = new Uint32Array(expected[out]!.buffer);
    bits[i]! += 1;
    assert.equal(compareDispatch(d.bindings, after, expected, d.tolerance).kind, "tolerance");
    assert.equal(compareDispatch(d.bindings, after, expected, undefined).kind, "differs");
    words[i] = words[i]! * 1.5 + 1;
    assert.equal(compareDispatch(d.bindings, after, expected, d.tolerance).kind, "differs");
  });
});
