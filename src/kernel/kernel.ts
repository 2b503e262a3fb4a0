/**
 * Kernels: WGSL source plus what the runtime needs to launch it.
 *
 * Standard WGSL compute kernels run as written. The binding rule:
 *
 * - **Order.** Every buffer the entry point uses (`var<storage, ...>` or
 *   `var<uniform>`, any `@group`) takes one launch argument, in
 *   `(group, binding)` order: `@group(0) @binding(0)`, `@group(0) @binding(3)`,
 *   `@group(1) @binding(0)` take `buffers[0]`, `buffers[1]`, `buffers[2]`.
 *   Gaps in the numbering take no argument. In a module of one entry point,
 *   every buffer declared counts; in a module of several, those the entry
 *   point's body and the functions it calls mention.
 * - **Info words.** When a launch passes info words (scalars, shapes), the
 *   last binding in that order takes them, read-only: declare it
 *   `var<storage, read>` or `var<uniform>` (e.g. `array<u32>` or a struct of
 *   32-bit fields). `launch` checks that the buffers, plus one with info
 *   words, number the bindings.
 * - **Access modes.** The runtime compiles a rewritten copy of the source
 *   ({@linkcode Kernel.compiledWgsl}): each binding moves to
 *   `@group(0) @binding(i)` in argument order and becomes
 *   `var<storage, read_write>`, and the info binding `var<storage, read>`.
 *   Pooled buffers share one `GPUBuffer`, and WebGPU forbids binding one
 *   buffer both writable and read-only in one dispatch, so a read-only or
 *   uniform declaration could not bind next to a writable slice of the same
 *   page. A `var<uniform>` struct keeps its memory layout: WGSL lays a type
 *   out the same way in storage, the uniform rules only add constraints. Line
 *   breaks and names stay, so compiler messages point at the user's lines.
 *   A uniform buffer counts toward `maxStorageBuffersPerShaderStage`.
 * - **Refused** by {@linkcode defineKernel} with a `KernelLayoutError` naming
 *   the declaration, the rule and the fix: textures, samplers and storage
 *   textures the entry point uses (the runtime binds buffers only), a `var`
 *   of another address space with `@group`/`@binding`, a buffer without one
 *   of them, two buffers at one `(group, binding)`, and a `@group`,
 *   `@binding` or needed `@id` that cannot be evaluated.
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
  /** Number of bindings (buffers, plus info words when given), or null when the entry point binds none. */
  bindings: number | null;
  /** Names of the bound variables, in argument order (`(group, binding)` order). */
  bindingNames: readonly string[];
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
  /** WGSL source, as given (see {@linkcode Kernel.compiledWgsl} for what is compiled). */
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
  #sources: readonly [string, string];

  /**
   * Creates the instance.
   *
   * @param options Validated options (use {@linkcode defineKernel}).
   * @throws {KernelLayoutError} When a binding cannot be bound, or a `@group`, `@binding` or `@id` the layout
   * depends on cannot be evaluated.
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
    const { layout, plan } = readLayout(this.name, this.wgsl, this.entryPoint, this.constants);
    this.layout = layout;
    this.#sources = [plan.wgsl, plan.wgslWithInfo];
  }

  /**
   * The source the runtime compiles: {@linkcode Kernel.wgsl} with each
   * binding moved to `@group(0) @binding(i)` in argument order and declared
   * `var<storage, read_write>`, except the info binding, `var<storage, read>`
   * (see the module doc for why). Everything else, line breaks included, is
   * the user's.
   *
   * @param info Whether the launch passes info words.
   * @returns The WGSL source.
   */
  compiledWgsl(info: boolean): string {
    return this.#sources[info ? 1 : 0];
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
 * @throws {KernelLayoutError} When the entry point uses a resource the runtime
 * cannot bind (a texture, sampler or storage texture, a `var` of another
 * address space with `@group`/`@binding`, a buffer missing one of them, two
 * buffers at one `(group, binding)`), or when a `@group` or `@binding` of a
 * buffer it uses, or the `@id` of an override its layout depends on, is an
 * expression the layout reader cannot evaluate. The error names the kernel,
 * the declaration, the rule and the fix.
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
