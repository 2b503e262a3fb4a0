/**
 * The real WebGPU clients `capture_conformance.ts` records, each as a list of
 * cases that run once on the client's WebGPU backend (captured) and once on
 * its CPU backend (the reference the GPU outputs must match):
 *
 * - ONNX Runtime Web 1.31.1 (npm `onnxruntime-web`): its native WebGPU EP
 *   (`onnxruntime-web/webgpu`, ep "webgpu") and its JavaScript EP
 *   (`onnxruntime-web/all`, ep "jsep"), on the models of `_ort_cases.ts`;
 *   the reference is its wasm EP.
 * - TensorFlow.js 4.22.0 (npm `@tensorflow/tfjs-core`,
 *   `@tensorflow/tfjs-backend-webgpu`, `@tensorflow/tfjs-backend-cpu`,
 *   ep "tfjs") on the ops of `_tfjs_cases.ts`; the reference is its cpu
 *   backend.
 *
 * Packages are imported through specifiers held in string arrays, so
 * `deno check` of bench/ never resolves them: they serve the capture only.
 *
 * @module
 */

import { ORT_CASES, type OrtCase, tensorValues } from "./_ort_cases.ts";
import { type DTypeName, type Initializer, onnxModel } from "./_onnx_model.ts";
import { TFJS_CASES, type TfjsCase } from "./_tfjs_cases.ts";
import type { CaseTolerance } from "./_ort_cases.ts";

/** Pinned versions of the clients. */
export const ORT_VERSION = "1.31.1";
export const TFJS_VERSION = "4.22.0";

/** One output tensor, as numbers. */
export interface Output {
  readonly name: string;
  readonly dims: readonly number[];
  readonly data: readonly number[];
}

/** One case: run on the GPU (captured), then on the CPU (the reference). */
export interface CaptureCase {
  readonly name: string;
  readonly op: string;
  readonly tolerance?: CaseTolerance;
  gpu(): Promise<Output[]>;
  reference(): Promise<Output[]>;
}

/** A client and its cases. */
export interface CaptureClient {
  readonly ep: string;
  /** The package and how the ep is reached, for the corpus' source. */
  readonly describe: string;
  readonly cases: readonly CaptureCase[];
}

// deno-lint-ignore no-explicit-any
type Untyped = any;

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

const ORT_MODULES: Record<string, string[]> = {
  webgpu: [`npm:onnxruntime-web@${ORT_VERSION}/webgpu`],
  jsep: [`npm:onnxruntime-web@${ORT_VERSION}/all`],
};

/** ONNX Runtime Web through one of its WebGPU EPs. */
export async function ortClient(ep: "webgpu" | "jsep"): Promise<CaptureClient> {
  const ort: Untyped = await import(ORT_MODULES[ep]![0]!);
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = "error";
  const run = async (c: OrtCase, provider: string): Promise<Output[]> => {
    const session = await ort.InferenceSession.create(modelOf(c), { executionProviders: [provider] });
    const feeds = Object.fromEntries(
      c.inputs.map((t) => [t.name, new ort.Tensor(ORT_TYPE[t.type], typed(t.type, tensorValues(c.name, t)), t.shape)]),
    );
    const out = await session.run(feeds);
    await session.release();
    return c.outputs.map((o) => ({
      name: o.name,
      dims: [...out[o.name].dims],
      data: Array.from(out[o.name].data as ArrayLike<number | bigint>, Number),
    }));
  };
  return {
    ep,
    describe: `onnxruntime-web@${ORT_VERSION} (npm), ${
      ep === "webgpu" ? "onnxruntime-web/webgpu" : "onnxruntime-web/all"
    }`,
    cases: ORT_CASES.map((c) => ({
      name: c.name,
      op: c.op,
      tolerance: c.tolerance,
      gpu: () => run(c, "webgpu"),
      reference: () => run(c, "wasm"),
    })),
  };
}

const TFJS_MODULES = [
  `npm:@tensorflow/tfjs-core@${TFJS_VERSION}`,
  `npm:@tensorflow/tfjs-backend-webgpu@${TFJS_VERSION}`,
  `npm:@tensorflow/tfjs-backend-cpu@${TFJS_VERSION}`,
];

/** TensorFlow.js's WebGPU backend. */
export async function tfjsClient(): Promise<CaptureClient> {
  const [tf] = await Promise.all(TFJS_MODULES.map((s) => import(s))) as Untyped[];
  // Every op on the GPU, however small its tensors (by default small ones run on the CPU).
  tf.env().set("WEBGPU_CPU_FORWARD", false);
  const run = async (c: TfjsCase, backend: string): Promise<Output[]> => {
    if (!(await tf.setBackend(backend))) throw new Error(`tfjs: setBackend("${backend}") failed`);
    await tf.ready();
    const input = (name: string, shape: number[], gen: Parameters<typeof tensorValues>[1]["gen"] = "signed") => {
      const dtype = gen === "int" || typeof gen === "object" && "index" in gen
        ? "int32"
        : gen === "bool"
        ? "bool"
        : "float32";
      return tf.tensor(tensorValues(c.name, { name, type: "float", shape, gen }), shape, dtype);
    };
    const list: Untyped[] = tf.tidy(() => {
      const r = c.run(tf, input);
      return Array.isArray(r) ? r : [r];
    });
    const out: Output[] = [];
    for (const [i, t] of list.entries()) {
      out.push({ name: `y${i}`, dims: [...t.shape], data: Array.from(await t.data() as ArrayLike<number>, Number) });
    }
    for (const t of list) t.dispose();
    return out;
  };
  return {
    ep: "tfjs",
    describe: `@tensorflow/tfjs-core, -backend-webgpu, -backend-cpu @${TFJS_VERSION} (npm), backend "webgpu"`,
    cases: TFJS_CASES.map((c) => ({
      name: c.name,
      op: c.op,
      tolerance: c.tolerance,
      gpu: () => run(c, "webgpu"),
      reference: () => run(c, "cpu"),
    })),
  };
}
