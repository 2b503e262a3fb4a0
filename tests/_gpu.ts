/**
 * GPU test helpers. Tests run on whatever adapter Deno finds; on machines
 * without a GPU that is Mesa's llvmpipe software adapter, which is what CI uses.
 */

import { type ClientOptions, type ComputeClient, createClient, defineKernel } from "../mod.ts";
import type { Handle, Kernel, TypedArray } from "../mod.ts";
import type { Transport } from "../mod.ts";

/**
 * True when `DENOGPU_TEST_FAST_READS=1`: `withClient` and the model test then
 * create their clients with `fastReads: true` unless a test says otherwise
 * (CI runs the suite both ways). False without env permission.
 */
export const TEST_FAST_READS: boolean = (() => {
  try {
    return Deno.permissions.querySync({ name: "env", variable: "DENOGPU_TEST_FAST_READS" }).state === "granted" &&
      Deno.env.get("DENOGPU_TEST_FAST_READS") === "1";
  } catch {
    return false;
  }
})();

/** Creates a client, runs `fn`, and destroys the client even when `fn` throws. */
export async function withClient(
  fn: (client: ComputeClient) => Promise<void> | void,
  options: ClientOptions = {},
): Promise<void> {
  const client = await createClient(TEST_FAST_READS ? { fastReads: true, ...options } : options);
  try {
    await fn(client);
  } finally {
    client.destroy();
  }
}

/** Bytes of a typed array as a Uint8Array view. */
export function bytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Reads a handle's bytes as f32, whatever its element type (an explicit type wins). */
export function readF32(client: ComputeClient<Transport>, h: Handle<TypedArray>): Promise<Float32Array<ArrayBuffer>> {
  return client.read(h as Handle, Float32Array);
}

/** Reads a handle's bytes as u32, whatever its element type (an explicit type wins). */
export function readU32(client: ComputeClient<Transport>, h: Handle<TypedArray>): Promise<Uint32Array<ArrayBuffer>> {
  return client.read(h as Handle, Uint32Array);
}

/** out[i] = a[i] + b[i] for i < n (info word 0). */
export const addKernel: Kernel = defineKernel({
  name: "add",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < n) { out[g.x] = a[g.x] + b[g.x]; }
}`,
});

/** dst[i] = src[i] + 1 for every element of an f32 array (no info words). */
export const plusOneKernel: Kernel = defineKernel({
  name: "plus-one",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x] + 1.0; }
}`,
});

/** x[i] += 1 for every element of a u32 array. */
export const incKernel: Kernel = defineKernel({
  name: "inc",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] + 1u; }
}`,
});

const ADD_CONST_WGSL = `
override K: u32;
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] + K; }
}`;

/**
 * x[i] += K for every element of a u32 array, with K a pipeline constant: every
 * K is a new pipeline, compiled (and validated) on its first launch, so the
 * stream holds the work issued after that launch until the validation is known.
 */
export function addConstKernel(k: number): Kernel {
  return defineKernel({ name: `add-const-${k}`, wgsl: ADD_CONST_WGSL, constants: { K: k } });
}

/** WGSL of dst[i] = src[i] * k + c for i < n, over `t` elements; info = [n, k, c]. */
const affineWgsl = (t: "u32" | "f32") => `
struct Info { n: u32, k: ${t}, c: ${t} }
@group(0) @binding(0) var<storage, read_write> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(2) var<storage, read> info: Info;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < info.n) { dst[g.x] = src[g.x] * info.k + info.c; }
}`;

/** dst[i] = src[i] * k + c (u32, wrapping) for i < n; info = [n, k, c] (12 bytes). */
export const affineKernel: Kernel = defineKernel({ name: "affine", wgsl: affineWgsl("u32") });

/** dst[i] = src[i] * k + c for i < n; info = [n, k (f32 bits), c (f32 bits)]. */
export const axpbKernel: Kernel = defineKernel({ name: "axpb", wgsl: affineWgsl("f32") });

/** Packs axpb info words. */
export function axpbInfo(n: number, k: number, c: number): Uint32Array {
  const w = new Uint32Array(3);
  w[0] = n;
  new Float32Array(w.buffer, 4, 2).set([k, c]);
  return w;
}

/**
 * Resolves after a macrotask (a zero timeout): by then a new kernel's
 * validation is known, and a stream holding work behind its first launch has
 * released that work.
 */
export const macrotask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** Counts the non-empty `queue.submit` calls on a device until `restore()`. */
export function countSubmits(device: GPUDevice): { count: () => number; restore: () => void } {
  const queue = device.queue;
  const submit = queue.submit;
  let n = 0;
  queue.submit = function (this: GPUQueue, cbs: GPUCommandBuffer[]) {
    if (cbs.length > 0) n++;
    return submit.call(this, cbs);
  };
  return { count: () => n, restore: () => (queue.submit = submit) };
}

/** Deterministic pseudo-random generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
