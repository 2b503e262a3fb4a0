/**
 * Builds the conformance corpus of `tests/conformance/` from real WebGPU
 * clients (`_capture_clients.ts`, versions pinned): ONNX Runtime Web 1.31.1
 * (npm `onnxruntime-web`) through both of its WebGPU execution providers, the
 * native one (`onnxruntime-web/webgpu`, C++ kernels compiled to WebAssembly,
 * ep "webgpu") and the JavaScript one (`onnxruntime-web/all`, ep "jsep"), on
 * the tiny ONNX models of `_ort_cases.ts` (written as protobuf bytes by
 * `_onnx_model.ts`); and TensorFlow.js 4.22.0's WebGPU backend (ep "tfjs") on
 * the ops of `_tfjs_cases.ts`. While each case runs, `_webgpu_capture.ts`
 * records every compute dispatch the client submits: WGSL, entry point,
 * constants, pipeline label, bindings, workgroup count, and every bound
 * range's bytes before and after the dispatch.
 *
 * Checks before anything is written:
 * - each case's outputs match the client's CPU backend on the same inputs
 *   (ORT's wasm EP, tfjs's cpu backend; relative 1e-3), which also shows no
 *   invocation met llvmpipe's loop limit: a case that does not is left out
 *   and named;
 * - each binding's type from the WGSL declaration matches the client's bind
 *   group layout where the layout was explicit;
 * - each dispatch replayed on raw WebGPU (`_raw_replay.ts`: its shader, the
 *   captured layout, buffers filled with the before-bytes) leaves exactly the
 *   captured after-bytes, which proves the capture exact. One that does not
 *   is left out and named.
 *
 * The corpus (`corpus.json.gz`, `corpus.bin.gz`; format in
 * `tests/conformance/_corpus.ts`) is then written to `OUT`. Capture on the
 * software adapter through Vulkan: the test requires exact bytes on the
 * adapter (description and features) the corpus names.
 *
 * Rerun (needs the npm registry, or Deno's cache holding the packages):
 *   DENO_WEBGPU_BACKEND=vulkan \
 *   deno run --no-lock --allow-read --allow-write --allow-env --allow-net bench/capture_conformance.ts
 * Environment: OUT=folder (default tests/conformance), EPS=webgpu,jsep,tfjs
 * (the default), ONLY=regex of case names, VERBOSE=1 (each case's dispatches).
 *
 * The packages are imported through specifiers held in string arrays, so
 * `deno check` of bench/ never resolves them: they serve this capture only,
 * never the module.
 *
 * @module
 */

import { type CaptureCase, type CaptureClient, ortClient, type Output, tfjsClient } from "./_capture_clients.ts";
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

const env = (k: string) => Deno.env.get(k);
const OUT = env("OUT") ?? "tests/conformance";
const EPS = (env("EPS") ?? "webgpu,jsep,tfjs").split(",");
const ONLY = env("ONLY") ? new RegExp(env("ONLY")!) : undefined;
const VERBOSE = env("VERBOSE") === "1";
const COMMAND = "deno run --no-lock --allow-read --allow-write --allow-env --allow-net bench/capture_conformance.ts";

/** Why two outputs differ, or undefined when they agree within 1e-3 relative. */
function disagreement(gpu: readonly Output[], cpu: readonly Output[]): string | undefined {
  for (const [k, g] of gpu.entries()) {
    const r = cpu[k];
    if (r === undefined) return `output ${g.name}: no reference`;
    if (JSON.stringify(g.dims) !== JSON.stringify(r.dims)) return `${g.name}: dims ${g.dims} vs ${r.dims}`;
    for (let i = 0; i < g.data.length; i++) {
      const x = g.data[i]!, y = r.data[i]!;
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      if (!(Math.abs(x - y) <= 1e-3 * Math.max(1, Math.abs(y)))) return `${g.name}[${i}]: ${x} (GPU) vs ${y} (CPU)`;
    }
  }
  return undefined;
}

interface Labelled {
  readonly ep: string;
  readonly c: CaptureCase;
  readonly d: CapturedDispatch;
}

const capture = new WebGpuCapture();
capture.install();
const kept: Labelled[] = [];
const leftOut: string[] = [];
const noDispatch: string[] = [];
const clients: Record<string, string> = {};
const first = (e: unknown) => String(e).split("\n")[0];

for (const ep of EPS) {
  let client: CaptureClient;
  if (ep === "webgpu" || ep === "jsep") client = await ortClient(ep);
  else if (ep === "tfjs") client = await tfjsClient();
  else throw new Error(`EPS: unknown ep ${ep} (webgpu, jsep, tfjs)`);
  clients[ep] = client.describe;
  for (const c of client.cases) {
    if (ONLY && !ONLY.test(c.name)) continue;
    const key = `${ep}/${c.name}`;
    capture.tag = key;
    capture.recording = true;
    const from = capture.dispatches.length;
    let gpu: Output[];
    try {
      gpu = await c.gpu();
      await capture.settled();
    } catch (e) {
      await capture.settled();
      capture.dispatches.length = from;
      leftOut.push(`${key}: the GPU run failed (${first(e)})`);
      continue;
    } finally {
      capture.recording = false;
    }
    let cpu: Output[];
    try {
      cpu = await c.reference();
    } catch (e) {
      leftOut.push(`${key}: the CPU reference failed (${first(e)})`);
      continue;
    }
    const why = disagreement(gpu, cpu);
    const mine = capture.dispatches.slice(from);
    if (why !== undefined) {
      leftOut.push(`${key}: its outputs differ from the CPU reference (${why})`);
      continue;
    }
    if (mine.length === 0) noDispatch.push(key);
    for (const d of mine) kept.push({ ep, c, d });
    if (VERBOSE) console.log(`${key}: ${mine.length} dispatches (${mine.map((d) => d.pipeline.label).join(", ")})`);
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
    clients: Object.entries(clients).map(([ep, d]) => `${ep}: ${d}`).join("; "),
    adapter: adapter.info.description,
    adapterFeatures: [...adapter.features].sort().join(","),
    backend: env("DENO_WEBGPU_BACKEND") ?? "",
    deno: Deno.version.deno,
    captured: new Date().toISOString().slice(0, 10),
    command: COMMAND,
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
const perEp = EPS.map((ep) => `${out.dispatches.filter((d) => d.ep === ep).length} ${ep}`).join(", ");
console.log(
  `${out.dispatches.length} dispatches (${perEp}), ${out.shaders.length} distinct shaders, ` +
    `${ops.size} operators; corpus.json.gz ${json.length} B, corpus.bin.gz ${blob.length} B ` +
    `(${final.bytes().length} B of blobs)`,
);
console.log(
  `binding types: ${layoutChecked} from an explicit bind group layout (each agreeing with its WGSL declaration), ` +
    `${layoutAuto} from the WGSL alone (layout "auto")`,
);
if (noDispatch.length > 0) console.log(`no GPU dispatch (the client ran them on the CPU): ${noDispatch.join(", ")}`);
for (const l of leftOut) console.log(`left out: ${l}`);
