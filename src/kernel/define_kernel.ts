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

import { Kernel, type KernelOptions } from "../contract/kernel.ts";
import { readLayout } from "./_layout_reader.ts";
import { stripComments } from "./_wgsl_source.ts";
import { describe } from "../_util/describe.ts";

/**
 * Defines a kernel from WGSL source.
 *
 * @example Define and launch an elementwise add
 * ```ts
 * import { createClient, defineKernel, packInfo } from "@denogpu/runtime";
 *
 * const add = defineKernel({
 *   name: "add",
 *   wgsl: `
 *     @group(0) @binding(0) var<storage, read> a: array<f32>;
 *     @group(0) @binding(1) var<storage, read> b: array<f32>;
 *     @group(0) @binding(2) var<storage, read_write> out: array<f32>;
 *     @group(0) @binding(3) var<uniform> n: u32;
 *     @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
 *       if (g.x < n) { out[g.x] = a[g.x] + b[g.x]; }
 *     }`,
 * });
 * await using client = await createClient();
 * using a = client.create(new Float32Array([1, 2, 3]));
 * using b = client.create(new Float32Array([4, 5, 6]));
 * using out = client.empty(12);
 * client.launch(add, [1], [a, b, out], packInfo({ u32: 3 }));
 * console.log(await client.read(out, Float32Array)); // Float32Array(3) [5, 7, 9]
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
      throw new TypeError(`defineKernel("${name}"): constant "${k}" must be a finite number, got ${describe(v)}`);
    }
  }
  if (!new RegExp(`\\bfn\\s+${entryPoint}\\s*\\(`).test(stripComments(wgsl))) {
    throw new TypeError(
      `defineKernel("${name}"): the source declares no function "${entryPoint}" for the entry point (fn ${entryPoint}(...))`,
    );
  }
  const { layout, plan } = readLayout(name, wgsl, entryPoint, constants);
  return new Kernel({ name, wgsl, entryPoint, constants, layout, compiled: [plan.wgsl, plan.wgslWithInfo] });
}
