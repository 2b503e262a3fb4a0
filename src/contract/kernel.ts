/**
 * A compute kernel as the contract sees it: WGSL source, entry point,
 * constants, a stable id, the layout read from the source and the sources the
 * runtime compiles. `defineKernel` (in `src/kernel/`) reads the source and
 * makes kernels; every layer above launches them.
 *
 * @module
 */

import { stableHash } from "../_util/hash.ts";

/** Options of `defineKernel`. */
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

/** How a binding is declared in the source (the runtime binds it as storage unless it is a uniform taking info words). */
export type BindingKind = "storage" | "read-only-storage" | "uniform";

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
  /** How each binding is declared, in argument order. */
  bindingKinds: readonly BindingKind[];
  /**
   * Fewest bytes each binding takes, by the WGSL memory layout rules (a
   * runtime-sized array counts one element, as WebGPU's minimum binding size
   * does), in argument order; 0 where the type could not be laid out. A
   * launch refuses a buffer, or info words, shorter than this.
   */
  bindingSizes: readonly number[];
  /** Bytes of `var<workgroup>` memory, when every declaration could be sized. */
  sharedMemoryBytes: number | null;
}

/**
 * A compute kernel. Create it once with `defineKernel` and launch it any
 * number of times; its pipelines are compiled on first launch and cached by
 * `id`.
 *
 * @example What a kernel knows of its source
 * ```ts
 * import { defineKernel } from "@denogpu/runtime";
 *
 * const fill = defineKernel({
 *   name: "fill",
 *   wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
 *          @group(0) @binding(1) var<uniform> value: u32;
 *          @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
 *            if (g.x < arrayLength(&x)) { x[g.x] = value; }
 *          }`,
 * });
 * console.log(fill.layout.bindingNames); // ["x", "value"]
 * console.log(fill.layout.workgroupSize); // [64, 1, 1]
 * ```
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
  /**
   * Internal: the id of the device limits this kernel was last found to fit
   * (workgroup size, workgroup memory, buffer counts), launched without and
   * with info words; the door checks the limits once per device. An id, not
   * the server: a module-level kernel must not keep a destroyed server alive.
   */
  fits: [number, number] = [0, 0];
  #sources: readonly [string, string];

  /**
   * Internal: kernels are made by `defineKernel`, which reads the layout and
   * the compiled sources from the WGSL.
   *
   * @param parts Validated options, the layout, and the compiled sources without and with info words.
   */
  constructor(parts: Required<KernelOptions> & { layout: KernelLayout; compiled: readonly [string, string] }) {
    const options = parts;
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
    this.layout = parts.layout;
    this.#sources = parts.compiled;
  }

  /**
   * The source the runtime compiles: {@linkcode Kernel.wgsl} with each
   * binding moved to `@group(0) @binding(i)` in argument order and declared
   * `var<storage, read_write>`, except the info binding: `var<uniform>` when
   * it is declared so, else `var<storage, read>` (see `defineKernel` for
   * why). A struct whose layout depends on `@align` or `@size` is written
   * with explicit padding members instead, so it has the offsets WGSL gives
   * on every backend. Everything else, line breaks included, is the user's.
   *
   * @param info Whether the launch passes info words.
   * @returns The WGSL source.
   */
  compiledWgsl(info: boolean): string {
    return this.#sources[info ? 1 : 0];
  }
}
