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
import { readLayout } from "./_layout_reader.ts";
import { stripComments } from "./_wgsl_source.ts";

/** Options of {@linkcode defineKernel}. */
export interface KernelOptions {
  /** Debug name, quoted in errors, logs and profiles. */
  name: string;
  /** The WGSL module source. */
  wgsl: string;
  /** Entry point of the compute shader. @default "main" */
  entryPoint?: string;
  /**
   * Values of pipeline-overridable constants (`override` declarations), keyed
   * as WebGPU keys them: by the decimal `@id` of an override that has one
   * (`"0"` for `@id(0) override x: u32;`), else by the override's name.
   */
  constants?: Record<string, number>;
}

/**
 * Facts read from the WGSL source, used to validate launches before WebGPU
 * sees them. Attributes are evaluated as WGSL does: integer literals (with
 * `i`/`u` suffixes, in hex), module-scope `const` and `override` values, and
 * const-expressions over them.
 */
export interface KernelLayout {
  /** `@workgroup_size` of the entry point, when its expressions could be evaluated. */
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
   * @throws {KernelLayoutError} When a `@group`, `@binding` or `@id` the layout depends on cannot be evaluated.
   */
  constructor(options: Required<KernelOptions>) {
    this.name = options.name;
    this.wgsl = options.wgsl;
    this.entryPoint = options.entryPoint;
    this.constants = Object.freeze({ ...options.constants });
    // Object.is: String(-0) is "0", and a -0 constant is not a 0 one (an f32 override keeps its sign).
    const consts = Object.keys(this.constants).sort().map((k) => {
      const v = this.constants[k]!;
      return `${k}=${Object.is(v, -0) ? "-0" : v}`;
    });
    this.id = `${this.name}-${stableHash(`${this.wgsl}\0${this.entryPoint}\0${consts.join(",")}`)}`;
    this.layout = readLayout(this.name, this.wgsl, this.entryPoint, this.constants);
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
 * @throws {KernelLayoutError} When a `@group` or `@binding` of a buffer the
 * entry point uses, or the `@id` of an override its layout depends on, is an
 * expression the layout reader cannot evaluate (the error names the kernel,
 * the attribute and why).
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
