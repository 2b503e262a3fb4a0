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
 * Dispatches the runtime is known to get wrong, by id, with what differs:
 * none. (The nine tfjs rank-5 and rank-6 dispatches whose `var<uniform>`
 * shapes are `@align(16) name: vec5` read wrong words through Deno's GL
 * backend until the runtime wrote such structs with explicit padding; the
 * list must stay empty, and a dispatch added to it must fail to pass.)
 */
const KNOWN_RUNTIME_FAILURES: Readonly<Record<string, string>> = {};

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
  const known = KNOWN_RUNTIME_FAILURES;
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
