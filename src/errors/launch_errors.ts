/**
 * Kernel launch failures (CubeCL's `LaunchError`): compilation, and device
 * limits exceeded.
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";
import { formatBytesExact } from "../_util/format.ts";

/** What went wrong in a {@linkcode LaunchError}. */
export type LaunchErrorKind =
  | "compilation"
  | "out-of-memory"
  | "too-many-resources"
  | "io"
  | "unknown";

/**
 * A kernel launch failed (CubeCL's `LaunchError`). Queued on the launching
 * stream and raised by the next draining call.
 *
 * @example Usage
 * ```ts
 * import { LaunchError } from "@denogpu/runtime";
 * const e = new LaunchError("unknown", "add", "dispatch failed");
 * console.log(e.kernel, e.kind); // "add" "unknown"
 * ```
 */
export class LaunchError extends ServerError {
  /** The failure domain. */
  readonly kind: LaunchErrorKind;
  /** Name of the kernel whose launch failed. */
  readonly kernel: string;

  /**
   * Builds the error.
   *
   * @param kind The failure domain.
   * @param kernel Name of the kernel.
   * @param message What failed.
   * @param options Standard `ErrorOptions`.
   */
  constructor(kind: LaunchErrorKind, kernel: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
    this.kernel = kernel;
  }
}

/**
 * A kernel's WGSL failed to compile or its pipeline failed validation
 * (CubeCL's `CompilationError`). Failed compilations are not cached: every
 * launch of the same broken kernel fails again.
 *
 * @example Usage
 * ```ts
 * import { CompilationError } from "@denogpu/runtime";
 * const e = new CompilationError("add", "expected ';'");
 * console.log(e.kernel, e.compilerMessage); // "add" "expected ';'"
 * ```
 */
export class CompilationError extends LaunchError {
  /** The compiler's own message, unchanged. */
  readonly compilerMessage: string;

  /**
   * Builds the error.
   *
   * @param kernel Name of the kernel.
   * @param compilerMessage The WGSL compiler's message.
   * @param options Standard `ErrorOptions`.
   */
  constructor(kernel: string, compilerMessage: string, options?: ErrorOptions) {
    super(
      "compilation",
      kernel,
      `WGSL compilation failed for kernel "${kernel}":\n${compilerMessage}`,
      options,
    );
    this.compilerMessage = compilerMessage;
  }
}

/** Which device limit a {@linkcode ResourceLimitError} exceeded. */
export type ResourceLimitKind =
  | "shared-memory"
  | "units"
  | "cube-dim"
  | "cube-count"
  | "bindings"
  | "buffer-size"
  | "binding-size";

/** Limits counted in bytes, whose values a message prints in binary units. */
const BYTE_LIMITS: ReadonlySet<ResourceLimitKind> = new Set(["shared-memory", "buffer-size", "binding-size"]);

function sizes(limit: ResourceLimitKind, values: readonly number[]): string {
  return BYTE_LIMITS.has(limit) ? values.map(formatBytesExact).join("×") : values.join("×");
}

/**
 * A request exceeded a device limit (CubeCL's `ResourceLimitError`). The
 * message names the limit, the requested value and the maximum (byte limits
 * in binary units: "requested 300 MiB exceeds the device limit maxBufferSize
 * = 256 MiB").
 *
 * @example Usage
 * ```ts
 * import { ResourceLimitError } from "@denogpu/runtime";
 * const e = new ResourceLimitError("units", "k", [2048], [1024], "maxComputeInvocationsPerWorkgroup");
 * console.log(e.requested, e.max); // [2048] [1024]
 * ```
 */
export class ResourceLimitError extends LaunchError {
  /** Which limit. */
  readonly limit: ResourceLimitKind;
  /** The requested value(s). */
  readonly requested: readonly number[];
  /** The device maximum(s). */
  readonly max: readonly number[];

  /**
   * Builds the error.
   *
   * @param limit Which limit was exceeded.
   * @param kernel Kernel name, or the operation for non-kernel limits.
   * @param requested The requested value(s).
   * @param max The maximum(s).
   * @param limitName The WebGPU limit's name, quoted in the message.
   * @param hint What to do instead, appended to the message.
   */
  constructor(
    limit: ResourceLimitKind,
    kernel: string,
    requested: readonly number[],
    max: readonly number[],
    limitName: string,
    hint?: string,
  ) {
    super(
      "too-many-resources",
      kernel,
      `${kernel}: requested ${sizes(limit, requested)} exceeds the device limit ${limitName} = ${sizes(limit, max)}${
        hint === undefined ? "" : `; ${hint}`
      }`,
    );
    this.limit = limit;
    this.requested = requested;
    this.max = max;
  }
}
