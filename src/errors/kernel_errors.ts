/**
 * Errors of kernel definition: a WGSL attribute whose value the layout reader
 * cannot work out.
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";

/**
 * `defineKernel` could not evaluate an attribute the runtime relies on to
 * check launches (`@group`, `@binding`, or the `@id` of an override it needs).
 * Thrown at once by `defineKernel` rather than guessing: a wrong binding count
 * or workgroup size would refuse valid launches, or let invalid ones through.
 *
 * @example Usage
 * ```ts
 * import { KernelLayoutError } from "@denogpu/runtime";
 * const e = new KernelLayoutError("k", "@binding", "FIRST", 'of var "x"', '"FIRST" is not declared');
 * console.log(e.kernel, e.attribute, e.expression); // "k" "@binding" "FIRST"
 * ```
 */
export class KernelLayoutError extends ServerError {
  /** Name of the kernel. */
  readonly kernel: string;
  /** The attribute, with its `@`: `@group`, `@binding` or `@id`. */
  readonly attribute: string;
  /** The attribute's expression, as written in the source (comments removed). */
  readonly expression: string;
  /** Why it could not be evaluated. */
  readonly reason: string;

  /**
   * Builds the error.
   *
   * @param kernel Name of the kernel.
   * @param attribute The attribute, e.g. `@binding`.
   * @param expression Its expression as written.
   * @param where What it is attached to, e.g. `of var "x"`.
   * @param reason Why it could not be evaluated.
   */
  constructor(kernel: string, attribute: string, expression: string, where: string, reason: string) {
    super(`defineKernel("${kernel}"): cannot evaluate ${attribute}(${expression}) ${where}: ${reason}`);
    this.kernel = kernel;
    this.attribute = attribute;
    this.expression = expression;
    this.reason = reason;
  }
}
