/**
 * Builds the conformance corpus of `tests/conformance/` from a real WebGPU
 * client: ONNX Runtime Web 1.31.1 (npm `onnxruntime-web`), through both of
 * its WebGPU execution providers: the native one (`onnxruntime-web/webgpu`,
 * C++ kernels compiled to WebAssembly, ep "webgpu") and the JavaScript one
 * (`onnxruntime-web/all`, "JSEP", ep "jsep"). Each case of `_ort_cases.ts`
 * (one tiny ONNX model, written as protobuf bytes by `_onnx_model.ts`) runs
 * once per EP while `_webgpu_capture.ts` records every compute dispatch ORT
 * submits: WGSL, entry point, constants, pipeline label, bindings, workgroup
 * count, and every bound range's bytes before and after the dispatch.
 *
 * Checks before anything is written:
 * - each case's outputs match ORT's CPU (wasm) EP on the same inputs
 *   (relative 1e-3): a case that does not is left out and named;
 * - each binding's type from the WGSL declaration matches the client's bind
 *   group layout where the layout was explicit;
 * - each dispatch replayed on raw WebGPU (`_raw_replay.ts`: its shader, the
 *   captured layout, buffers filled with the before-bytes) leaves exactly the
 *   captured after-bytes, which proves the capture exact. One that does not
 *   is left out and named.
 *
 * The corpus (`corpus.json.gz`, `corpus.bin.gz`; format in
 * `tests/conformance/_corpus.ts`) is then written to `OUT`.
 *
 * Rerun (needs the npm registry, or Deno's cache holding the package):
 *   deno run --no-lock --allow-read --allow-write --allow-env --allow-net bench/capture_ort_conformance.ts
 * Environment: OUT=folder (default tests/conformance), EPS=webgpu,jsep
 * (default both), ONLY=regex of case names, VERBOSE=1.
 *
 * The package is imported through a specifier held in a string array, so
 * `deno check` of bench/ never resolves it: it serves this capture only,
 * never the module.
 *
 * @module
 */

import { ORT_CASES, type OrtCase, tensorValues } from "./_ort_cases.ts";
import { type DTypeName, type Initializer, onnxModel } from "./_onnx_model.ts";
import { type CapturedDispatch, WebGpuCapture } from "./_webgpu_capture.ts";
import { computeEntryPoints, wgslBuffers, wgslFeatures } from "./_wgsl_bindings.ts";
import { replayRaw } from "./_raw_replay.ts";
import {
  BlobWriter,
  type Corpus,
  type CorpusBinding,
  type CorpusDispatch,
  type CorpusIndex,
  elementKind,
  gzip,
} from "../tests/conformance/_corpus.ts";

const ORT_VERSION = "1.31.1";
const EP_MODULES: Record<string, string[]> = {
  webgpu: [`npm:onnxruntime-web@${ORT_VERSION}/webgpu`],
  jsep: [`npm:onnxruntime-web@${ORT_VERSION}/all`],
};
const env = (k: string) => Deno.env.get(k);
const OUT = env("OUT") ?? "tests/conformance";
const EPS = (env("EPS") ?? "webgpu,jsep").split(",");
const ONLY = env("ONLY") ? new RegExp(env("ONLY")!) : undefined;
const VERBOSE = env("VERBOSE") === "1";

// deno-lint-ignore no-explicit-any
type Ort = any;

const ORT_TYPE: Record<DTypeName, string> = {
  float: "float32",
  uint8: "uint8",
  int8: "int8",
  int32: "int32",
  int64: "int64",
  bool: "bool",
  float16: "float16",
  uint32: "uint32",
};

function typed(type: DTypeName, values: number[]): ArrayBufferView {
  switch (type) {
    case "float":
      return new Float32Array(values);
    case "int32":
      return new Int32Array(values);
    case "int64":
      return BigInt64Array.from(values, (v) => BigInt(v));
    case "uint32":
      return new Uint32Array(values);
    case "int8":
      return new Int8Array(values);
    case "bool":
    case "uint8":
      return new Uint8Array(values);
    case "float16":
      throw new TypeError("float16 inputs are not generated");
  }
}

function modelOf(c: OrtCase): Uint8Array {
  const inits: Initializer[] = (c.initializers ?? []).map((t) => {
    const v = typed(t.type, tensorValues(c.name, t));
    return { ...t, raw: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) };
  });
  return onnxModel(c.nodes, c.inputs, c.outputs, inits, c.opset ?? 17);
}

function feedsOf(ort: Ort, c: OrtCase): Record<string, unknown> {
  return Object.fromEntries(
    c.inputs.map((t) => [t.name, new ort.Tensor(ORT_TYPE[t.type], typed(t.type, tensorValues(c.name, t)), t.shape)]),
  );
}

/** Why two outputs differ, or undefined when they agree within 1e-3 relative. */
function disagreement(gpu: Ort, cpu: Ort): string | undefined {
  if (JSON.stringify(gpu.dims) !== JSON.stringify(cpu.dims)) return `dims ${gpu.dims} vs ${cpu.dims}`;
  const a = Array.from(gpu.data as ArrayLike<number | bigint>, Number);
  const b = Array.from(cpu.data as ArrayLike<number | bigint>, Number);
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!, y = b[i]!;
    if (Number.isNaN(x) && Number.isNaN(y)) continue;
    if (!(Math.abs(x - y) <= 1e-3 * Math.max(1, Math.abs(y)))) return `element ${i}: ${x} (webgpu) vs ${y} (cpu)`;
  }
  return undefined;
}

interface Labelled {
  readonly ep: string;
  readonly c: OrtCase;
  readonly d: CapturedDispatch;
}

const capture = new WebGpuCapture();
capture.install();
const kept: Labelled[] = [];
const leftOut: string[] = [];
const noDispatch: string[] = [];

for (const ep of EPS) {
  const specs = EP_MODULES[ep];
  if (specs === undefined) throw new Error(`EPS: unknown ep ${ep} (webgpu, jsep)`);
  const ort: Ort = await import(specs[0]!);
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = "error";
  for (const c of ORT_CASES) {
    if (ONLY && !ONLY.test(c.name)) continue;
    const model = modelOf(c);
    capture.tag = `${ep}/${c.name}`;
    capture.recording = true;
    const first = capture.dispatches.length;
    let gpu: Record<string, Ort>;
    try {
      const session = await ort.InferenceSession.create(model, { executionProviders: ["webgpu"] });
      gpu = await session.run(feedsOf(ort, c));
      await capture.settled();
      await session.release();
    } catch (e) {
      await capture.settled();
      capture.dispatches.length = first;
      leftOut.push(`${ep}/${c.name}: ORT failed (${String(e).split("\n")[0]})`);
      continue;
    } finally {
      capture.recording = false;
    }
    let cpu: Record<string, Ort>;
    try {
      const cpuSession = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
      cpu = await cpuSession.run(feedsOf(ort, c));
      await cpuSession.release();
    } catch (e) {
      leftOut.push(`${ep}/${c.name}: ORT's CPU EP, the reference, failed (${String(e).split("\n")[0]})`);
      continue;
    }
    const why = c.outputs.map((o) => disagreement(gpu[o.name], cpu[o.name])).find((w) => w !== undefined);
    const mine = capture.dispatches.slice(first);
    if (why !== undefined) {
      leftOut.push(`${ep}/${c.name}: its outputs differ from ORT's CPU EP (${why})`);
      continue;
    }
    if (mine.length === 0) noDispatch.push(`${ep}/${c.name}`);
    for (const d of mine) kept.push({ ep, c, d });
    if (VERBOSE) {
      console.log(`${ep}/${c.name}: ${mine.length} dispatches (${mine.map((d) => d.pipeline.label).join(", ")})`);
    }
  }
}

// Into corpus form.
const shaders: string[] = [];
const shaderIndex = new Map<string, number>();
const blobs = new BlobWriter();
const dispatches: CorpusDispatch[] = [];
const perCase = new Map<string, number>();
let layoutChecked = 0;
let layoutAuto = 0;
for (const { ep, c, d } of kept) {
  const code = d.pipeline.code;
  if (!shaderIndex.has(code)) {
    shaderIndex.set(code, shaders.length);
    shaders.push(code);
  }
  const decls = wgslBuffers(code);
  const bindings: CorpusBinding[] = [];
  const key = `${ep}/${c.name}`;
  const n = perCase.get(key) ?? 0;
  perCase.set(key, n + 1);
  const id = `${key}/${n}`;
  let bad: string | undefined;
  for (const [i, r] of d.ranges.entries()) {
    const decl = decls.find((x) => x.group === r.group && x.binding === r.binding);
    if (decl === undefined) {
      bad = `binding (${r.group}, ${r.binding}) is bound but not declared in the WGSL`;
      break;
    }
    if (r.layoutType !== undefined) layoutChecked++;
    else layoutAuto++;
    if (r.layoutType !== undefined && r.layoutType !== decl.type) {
      bad = `binding ${decl.name}: layout says ${r.layoutType}, WGSL ${decl.type}`;
      break;
    }
    bindings.push({
      group: r.group,
      binding: r.binding,
      type: decl.type,
      name: decl.name,
      element: elementKind(decl.storeType),
      before: await blobs.add(d.before[i]!),
      after: await blobs.add(d.after[i]!),
    });
  }
  const entries = computeEntryPoints(code);
  const entryPoint = d.pipeline.entryPoint ?? (entries.length === 1 ? entries[0]! : undefined);
  if (entryPoint === undefined) bad = `no entry point named, and the module has ${entries.length}`;
  bad ??= d.problem;
  if (bad !== undefined) {
    leftOut.push(`${id}: ${bad}`);
    continue;
  }
  dispatches.push({
    id,
    ep,
    op: c.op,
    case: c.name,
    program: d.pipeline.label,
    shader: shaderIndex.get(code)!,
    entryPoint: entryPoint!,
    constants: d.pipeline.constants,
    workgroups: d.workgroups,
    bindings,
    features: wgslFeatures(code),
    ...(c.tolerance ? { tolerance: c.tolerance } : {}),
  });
}

const adapter = await navigator.gpu.requestAdapter();
if (adapter === null) throw new Error("no WebGPU adapter");
const index: CorpusIndex = {
  format: 1,
  source: {
    client:
      `onnxruntime-web@${ORT_VERSION} (npm): ep "webgpu" is onnxruntime-web/webgpu, "jsep" is onnxruntime-web/all`,
    adapter: adapter.info.description,
    deno: Deno.version.deno,
    captured: new Date().toISOString().slice(0, 10),
    command: "deno run --no-lock --allow-read --allow-write --allow-env --allow-net bench/capture_ort_conformance.ts",
  },
  shaders,
  blobs: blobs.blobs,
  dispatches,
};
const bin = blobs.bytes();
const corpus: Corpus = {
  index,
  blob: (i) => bin.subarray(index.blobs[i]![0], index.blobs[i]![0] + index.blobs[i]![1]),
};

// Every dispatch must replay on raw WebGPU to its captured after-bytes.
const features = [...new Set(dispatches.flatMap((d) => d.features))] as GPUFeatureName[];
const device = await adapter.requestDevice({ requiredFeatures: features.filter((f) => adapter.features.has(f)) });
const exact: CorpusDispatch[] = [];
for (const d of dispatches) {
  try {
    const after = await replayRaw(device, corpus, d);
    const diff = d.bindings.findIndex((b, i) => !equalBytes(after[i]!, corpus.blob(b.after)));
    if (diff >= 0) leftOut.push(`${d.id}: replayed on raw WebGPU, binding ${d.bindings[diff]!.name} differs`);
    else exact.push(d);
  } catch (e) {
    leftOut.push(`${d.id}: raw replay failed (${String(e).split("\n")[0]})`);
  }
}
device.destroy();

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// Write only what replayed exactly, with blobs renumbered to those it uses.
const final = new BlobWriter();
const written: CorpusDispatch[] = [];
for (const d of exact) {
  const bindings: CorpusBinding[] = [];
  for (const b of d.bindings) {
    bindings.push({
      ...b,
      before: await final.add(corpus.blob(b.before)),
      after: await final.add(corpus.blob(b.after)),
    });
  }
  written.push({ ...d, bindings });
}
const usedShaders = [...new Set(written.map((d) => d.shader))].sort((a, b) => a - b);
const remap = new Map(usedShaders.map((s, i) => [s, i]));
const out: CorpusIndex = {
  ...index,
  shaders: usedShaders.map((s) => shaders[s]!),
  blobs: final.blobs,
  dispatches: written.map((d) => ({ ...d, shader: remap.get(d.shader)! })),
};
await Deno.mkdir(OUT, { recursive: true });
const json = await gzip(new TextEncoder().encode(JSON.stringify(out)));
const blob = await gzip(final.bytes());
await Deno.writeFile(`${OUT}/corpus.json.gz`, json);
await Deno.writeFile(`${OUT}/corpus.bin.gz`, blob);

const ops = new Set(out.dispatches.map((d) => d.op));
console.log(
  `${out.dispatches.length} dispatches (${out.dispatches.filter((d) => d.ep === "webgpu").length} webgpu, ` +
    `${out.dispatches.filter((d) => d.ep === "jsep").length} jsep), ${out.shaders.length} distinct shaders, ` +
    `${ops.size} operators; corpus.json.gz ${json.length} B, corpus.bin.gz ${blob.length} B ` +
    `(${final.bytes().length} B of blobs)`,
);
console.log(
  `binding types: ${layoutChecked} from an explicit bind group layout (each agreeing with its WGSL declaration), ` +
    `${layoutAuto} from the WGSL alone (layout "auto")`,
);
if (noDispatch.length > 0) console.log(`no GPU dispatch (ORT ran them elsewhere): ${noDispatch.join(", ")}`);
for (const l of leftOut) console.log(`left out: ${l}`);
