/**
 * Kernels: WGSL source plus what the runtime needs to launch it.
 *
 * Binding convention: the buffers of a launch bind at `@group(0) @binding(i)`
 * in argument order and must be declared `var<storage, read_write>` (sliced
 * pools put many allocations in one `GPUBuffer`, and WebGPU forbids binding one
 * buffer both read-only and writable in one dispatch). Optional info words
 * (scalars, shapes) bind last, at `@binding(buffers.length)`, declared
 * `var<storage, read>`, e.g. `array<u32>` or a struct of 32-bit fields.
 *
 * @module
 */

import { stableHash } from "../_util/hash.ts";

/** Options of {@linkcode defineKernel}. */
export interface KernelOptions {
  /** Debug name, quoted in errors, logs and profiles. */
  name: string;
  /** The WGSL module source. */
  wgsl: string;
  /** Entry point of the compute shader. @default "main" */
  entryPoint?: string;
  /** Values of pipeline-overridable constants (`override` declarations). */
  constants?: Record<string, number>;
}

/** Facts read from the WGSL source, used to validate launches before WebGPU sees them. */
export interface KernelLayout {
  /** `@workgroup_size` of the entry point, when it is made of literals or known constants. */
  workgroupSize: readonly [number, number, number] | null;
  /** Number of `@group(0)` bindings declared, when they could be read. */
  bindings: number | null;
  /** Bytes of `var<workgroup>` memory, when every declaration could be sized. */
  sharedMemoryBytes: number | null;
}

/**
 * A compute kernel. Create it once with {@linkcode defineKernel} and launch it
 * any number of times; its pipelines are compiled on first launch and cached by
 * `id`.
 */
export class Kernel {
  /** Debug name. */
  readonly name: string;
  /** WGSL source. */
  readonly wgsl: string;
  /** Entry point. */
  readonly entryPoint: string;
  /** Pipeline-overridable constants. */
  readonly constants: Readonly<Record<string, number>>;
  /**
   * Stable id: the name plus a hash of the source, entry point and constants.
   * Identical across runs and processes, so it can key persistent caches.
   */
  readonly id: string;
  /** What could be read from the source. */
  readonly layout: KernelLayout;
  /**
   * Internal: the pipeline slots of the pipeline cache that compiled this
   * kernel last, so a launch finds its pipeline without a map lookup.
   */
  compiled: { owner: object | null; slots: unknown[] } = { owner: null, slots: [] };

  /**
   * Creates the instance.
   *
   * @param options Validated options (use {@linkcode defineKernel}).
   */
  constructor(options: Required<KernelOptions>) {
    this.name = options.name;
    this.wgsl = options.wgsl;
    this.entryPoint = options.entryPoint;
    this.constants = Object.freeze({ ...options.constants });
    const consts = Object.keys(this.constants).sort().map((k) => `${k}=${this.constants[k]}`);
    this.id = `${this.name}-${stableHash(`${this.wgsl}\0${this.entryPoint}\0${consts.join(",")}`)}`;
    this.layout = readLayout(this.wgsl, this.entryPoint, this.constants);
  }
}

/**
 * Defines a kernel from WGSL source.
 *
 * @example Define and launch an elementwise add
 * ```ts ignore
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * const add = defineKernel({
 *   name: "add",
 *   wgsl: `
 *     @group(0) @binding(0) var<storage, read_write> a: array<f32>;
 *     @group(0) @binding(1) var<storage, read_write> b: array<f32>;
 *     @group(0) @binding(2) var<storage, read_write> out: array<f32>;
 *     @group(0) @binding(3) var<storage, read> n: u32;
 *     @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
 *       if (g.x < n) { out[g.x] = a[g.x] + b[g.x]; }
 *     }`,
 * });
 * const client = await createClient();
 * const a = client.create(new Float32Array([1, 2, 3]));
 * const b = client.create(new Float32Array([4, 5, 6]));
 * const out = client.empty(12);
 * client.launch(add, [1, 1, 1], [a, b, out], new Uint32Array([3]));
 * console.log(new Float32Array((await client.read(out)).buffer)); // [5, 7, 9]
 * ```
 *
 * @param options Name, WGSL source, entry point and constants.
 * @returns The kernel.
 * @throws {TypeError} When the name or source is not a non-empty string, the
 * entry point is not declared in the source, or a constant is not a finite number.
 */
export function defineKernel(options: KernelOptions): Kernel {
  if (options === null || typeof options !== "object") {
    throw new TypeError("defineKernel: options must be an object { name, wgsl, entryPoint?, constants? }");
  }
  const { name, wgsl } = options;
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`defineKernel: name must be a non-empty string, got ${JSON.stringify(name)}`);
  }
  if (typeof wgsl !== "string" || wgsl.trim().length === 0) {
    throw new TypeError(`defineKernel("${name}"): wgsl must be a non-empty string of WGSL source`);
  }
  const entryPoint = options.entryPoint ?? "main";
  if (typeof entryPoint !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(entryPoint)) {
    throw new TypeError(
      `defineKernel("${name}"): entryPoint must be a WGSL identifier, got ${JSON.stringify(entryPoint)}`,
    );
  }
  const constants = options.constants ?? {};
  if (constants === null || typeof constants !== "object") {
    throw new TypeError(`defineKernel("${name}"): constants must be an object of numbers`);
  }
  for (const [k, v] of Object.entries(constants)) {
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new TypeError(`defineKernel("${name}"): constant "${k}" must be a finite number, got ${String(v)}`);
    }
  }
  if (!new RegExp(`\\bfn\\s+${entryPoint}\\s*\\(`).test(stripComments(wgsl))) {
    throw new TypeError(
      `defineKernel("${name}"): the source declares no function "${entryPoint}" for the entry point (fn ${entryPoint}(...))`,
    );
  }
  return new Kernel({ name, wgsl, entryPoint, constants });
}

const SCALAR_BYTES: Record<string, number> = { f32: 4, i32: 4, u32: 4, f16: 2, bool: 4 };

/** Bytes of a WGSL type made of scalars, vectors and fixed arrays, or null. */
function typeBytes(type: string, constants: Readonly<Record<string, number>>): number | null {
  const t = type.replace(/\s+/g, "");
  if (t in SCALAR_BYTES) return SCALAR_BYTES[t]!;
  const vec = /^vec([234])(?:<(\w+)>|([fiuh]))$/.exec(t);
  if (vec) {
    const n = Number(vec[1]);
    const elem = vec[2] ?? ({ f: "f32", i: "i32", u: "u32", h: "f16" } as Record<string, string>)[vec[3]!]!;
    const e = SCALAR_BYTES[elem];
    return e === undefined ? null : (n === 3 ? 4 : n) * e;
  }
  const mat = /^mat([234])x([234])(?:<(\w+)>|([fh]))$/.exec(t);
  if (mat) {
    const cols = Number(mat[1]);
    const rows = Number(mat[2]);
    const e = (mat[3] ?? (mat[4] === "h" ? "f16" : "f32")) === "f16" ? 2 : 4;
    return cols * (rows === 3 ? 4 : rows) * e;
  }
  const arr = /^array<(.+),(?:(\d+)[ui]?|([A-Za-z_]\w*))>$/.exec(t);
  if (arr) {
    const inner = typeBytes(arr[1]!, constants);
    const count = arr[2] !== undefined ? Number(arr[2]) : constants[arr[3]!];
    return inner === null || count === undefined ? null : inner * count;
  }
  return null;
}

/**
 * Replaces every comment with a space, as WGSL reads them: block comments
 * nest, and a line comment (which may contain `/*`) ends at the line break.
 */
function stripComments(src: string): string {
  let out = "";
  let from = 0; // start of the code not yet copied
  let i = 0;
  while (i < src.length - 1) {
    const two = src.slice(i, i + 2);
    if (two === "//") {
      out += src.slice(from, i) + " ";
      const end = src.indexOf("\n", i);
      i = from = end < 0 ? src.length : end;
    } else if (two === "/*") {
      out += src.slice(from, i) + " ";
      let depth = 1;
      i += 2;
      while (i < src.length && depth > 0) {
        const t = src.slice(i, i + 2);
        if (t === "/*" || t === "*/") {
          depth += t === "/*" ? 1 : -1;
          i += 2;
        } else {
          i++;
        }
      }
      from = i;
    } else {
      i++;
    }
  }
  return out + src.slice(from);
}

/**
 * In a module of several entry points, the names the entry point's body and
 * the functions it calls (transitively) mention: module variables outside it
 * are not part of its pipeline. Null when the module has one entry point (all
 * its declarations count) or the entry point's body cannot be found.
 */
function entryPointUses(src: string, entryPoint: string): Set<string> | null {
  if ([...src.matchAll(/@compute\b/g)].length < 2) return null;
  const bodies = new Map<string, string>();
  for (const m of src.matchAll(/\bfn\s+(\w+)\s*\(/g)) {
    const open = src.indexOf("{", m.index + m[0].length);
    if (open < 0) continue;
    let depth = 0;
    let end = open;
    for (; end < src.length; end++) {
      if (src[end] === "{") depth++;
      else if (src[end] === "}" && --depth === 0) break;
    }
    bodies.set(m[1]!, src.slice(open, end + 1));
  }
  if (!bodies.has(entryPoint)) return null;
  const used = new Set<string>([entryPoint]);
  const todo = [entryPoint];
  while (todo.length > 0) {
    for (const [name] of bodies.get(todo.pop()!)!.matchAll(/[A-Za-z_]\w*/g)) {
      if (used.has(name)) continue;
      used.add(name);
      if (bodies.has(name)) todo.push(name);
    }
  }
  return used;
}

/** Reads workgroup size, binding count and shared memory from WGSL source. */
function readLayout(
  wgsl: string,
  entryPoint: string,
  constants: Readonly<Record<string, number>>,
): KernelLayout {
  const src = stripComments(wgsl);
  const known: Record<string, number> = { ...constants };
  for (const m of src.matchAll(/\b(?:const|override)\s+(\w+)\s*(?::\s*\w+\s*)?=\s*(\d+)[ui]?\s*;/g)) {
    if (!(m[1]! in known)) known[m[1]!] = Number(m[2]);
  }
  let workgroupSize: [number, number, number] | null = null;
  for (const m of src.matchAll(/((?:@\w+\s*(?:\([^)]*\))?\s*)+)fn\s+(\w+)/g)) {
    if (m[2] !== entryPoint) continue;
    const ws = /@workgroup_size\s*\(([^)]*)\)/.exec(m[1]!);
    if (!ws) break;
    const dims = ws[1]!.split(",").map((s) => s.trim()).filter((s) => s.length > 0).map((s) => {
      const lit = /^(\d+)[ui]?$/.exec(s);
      return lit ? Number(lit[1]) : known[s];
    });
    if (dims.every((d) => d !== undefined)) {
      workgroupSize = [dims[0]!, dims[1] ?? 1, dims[2] ?? 1];
    }
    break;
  }
  const used = entryPointUses(src, entryPoint);
  const bindingIndices = new Set<number>();
  for (
    const m of src.matchAll(
      /@(group|binding)\s*\(\s*(\d+)\s*\)\s*@(group|binding)\s*\(\s*(\d+)\s*\)\s*var\s*(?:<[^>]*>)?\s*(\w+)/g,
    )
  ) {
    const group = m[1] === "group" ? m[2] : m[4];
    const binding = m[1] === "binding" ? m[2] : m[4];
    if (group === "0" && (used === null || used.has(m[5]!))) bindingIndices.add(Number(binding));
  }
  const bindings = bindingIndices.size === 0 ? null : Math.max(...bindingIndices) + 1;
  let shared: number | null = 0;
  for (const m of src.matchAll(/var\s*<\s*workgroup\s*>\s*(\w+)\s*:\s*([^;=]+)/g)) {
    if (used !== null && !used.has(m[1]!)) continue;
    const bytes = typeBytes(m[2]!, known);
    if (bytes === null) {
      shared = null;
      break;
    }
    shared += Math.ceil(bytes / 4) * 4;
  }
  return { workgroupSize, bindings, sharedMemoryBytes: shared };
}
