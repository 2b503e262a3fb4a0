/**
 * Errors of kernel definition: a declaration the runtime cannot bind, or a
 * WGSL attribute whose value the layout reader cannot work out.
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";

/**
 * What {@linkcode KernelLayoutError} refuses:
 * - `"unevaluable"`: a `@group`, `@binding` or needed `@id` whose expression the reader cannot evaluate;
 * - `"unbindable"`: a resource the entry point uses that the runtime cannot bind (a texture, a sampler, a
 *   storage texture, a `var` of another address space with `@group`/`@binding`, a buffer missing one of them);
 * - `"duplicate"`: two bindings the entry point uses at the same `(group, binding)`.
 */
export type KernelLayoutErrorKind = "unevaluable" | "unbindable" | "duplicate";

/** What went wrong, for {@linkcode KernelLayoutError}'s constructor. */
export interface KernelLayoutProblem {
  /** Which rule was broken. */
  kind: KernelLayoutErrorKind;
  /** The declaration at fault as written (comments removed), e.g. `@group(0) @binding(2) var t: texture_2d<f32>`. */
  declaration: string;
  /** The rule it breaks, or (kind `"unevaluable"`) why the attribute could not be evaluated. */
  reason: string;
  /** What to do about it. */
  fix: string;
  /** Kind `"unevaluable"`: the attribute, with its `@`. */
  attribute?: string;
  /** Kind `"unevaluable"`: the attribute's expression as written. */
  expression?: string;
}

/**
 * `defineKernel` refused a declaration: a resource the runtime cannot bind
 * (textures, samplers, storage textures; it binds storage and uniform
 * buffers), two bindings at the same `(group, binding)`, or an attribute the
 * runtime relies on to check launches (`@group`, `@binding`, the `@id` of an
 * override it needs) that it cannot evaluate. Thrown at once by
 * `defineKernel`, rather than failing at the next sync or guessing: a wrong
 * binding count or workgroup size would refuse valid launches, or let invalid
 * ones through. The message names the kernel, the declaration, the rule and
 * the fix.
 *
 * @example Usage
 * ```ts
 * import { KernelLayoutError } from "@denogpu/runtime";
 * const e = new KernelLayoutError("k", {
 *   kind: "unbindable",
 *   declaration: "@group(0) @binding(1) var t: texture_2d<f32>",
 *   reason: "the runtime binds buffers only, not textures",
 *   fix: "Pass the texels in a storage buffer (array<f32>) and index it.",
 * });
 * console.log(e.kind, e.declaration); // "unbindable" "@group(0) @binding(1) var t: texture_2d<f32>"
 * ```
 */
export class KernelLayoutError extends ServerError {
  /** Which rule was broken. */
  readonly kind: KernelLayoutErrorKind;
  /** Name of the kernel. */
  readonly kernel: string;
  /** The declaration at fault, as written (comments removed, whitespace collapsed). */
  readonly declaration: string;
  /** Kind `"unevaluable"`: the attribute, with its `@` (`@group`, `@binding` or `@id`); else `""`. */
  readonly attribute: string;
  /** Kind `"unevaluable"`: the attribute's expression, as written; else `""`. */
  readonly expression: string;
  /** The rule the declaration breaks, or why the attribute could not be evaluated. */
  readonly reason: string;
  /** What to do about it. */
  readonly fix: string;

  /**
   * Builds the error.
   *
   * @param kernel Name of the kernel.
   * @param problem The declaration, the rule it breaks and the fix.
   */
  constructor(kernel: string, problem: KernelLayoutProblem) {
    const { kind, declaration, reason, fix, attribute = "", expression = "" } = problem;
    const what = kind === "unevaluable"
      ? `cannot evaluate ${attribute}(${expression}) in \`${declaration}\`: ${reason}`
      : `\`${declaration}\`: ${reason}`;
    super(`defineKernel("${kernel}"): ${what}. ${fix}`);
    this.kind = kind;
    this.kernel = kernel;
    this.declaration = declaration;
    this.attribute = attribute;
    this.expression = expression;
    this.reason = reason;
    this.fix = fix;
  }
}
