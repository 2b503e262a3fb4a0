/**
 * Errors of a stream's draining, profiling and capture calls: the drained
 * error queue, failed profiles, and out-of-order graph capture calls.
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";

/**
 * The drained contents of a stream's error queue (CubeCL's
 * `ServerError::ServerUnhealthy`). Draining empties the queue, so the next
 * draining call succeeds unless new errors arrived.
 *
 * @example Usage
 * ```ts
 * import { ServerUnhealthyError, ServerError } from "@denogpu/runtime";
 * const e = new ServerUnhealthyError(0, [new ServerError("a"), new ServerError("b")]);
 * console.log(e.errors.length); // 2
 * ```
 */
export class ServerUnhealthyError extends ServerError {
  /** Every error that was queued, oldest first. */
  readonly errors: readonly ServerError[];
  /** The stream whose queue was drained. */
  readonly stream: number;

  /**
   * Builds the error.
   *
   * @param stream The drained stream.
   * @param errors The queued errors, oldest first.
   */
  constructor(stream: number, errors: readonly ServerError[]) {
    const shown = errors.slice(0, 10).map((e, i) => `  ${i + 1}. [${e.name}] ${e.message}`);
    if (errors.length > 10) shown.push(`  ... and ${errors.length - 10} more (see .errors)`);
    super(
      `stream ${stream} is unhealthy: ${errors.length} queued error${errors.length === 1 ? "" : "s"}:\n${
        shown.join("\n")
      }`,
      { cause: errors[0] },
    );
    this.errors = errors;
    this.stream = stream;
  }
}

/** What went wrong in a {@linkcode ProfileError}. */
export type ProfileErrorKind = "unknown" | "not-registered" | "launch" | "server";

/**
 * A profiling failure (CubeCL's `ProfileError`): an unknown or already ended
 * token (`not-registered`), or an error drained while the profile was open.
 *
 * @example Usage
 * ```ts
 * import { ProfileError } from "@denogpu/runtime";
 * const e = new ProfileError("not-registered", "token 3 was already ended");
 * console.log(e.kind); // "not-registered"
 * ```
 */
export class ProfileError extends ServerError {
  /** The failure kind. */
  readonly kind: ProfileErrorKind;

  /**
   * Builds the error.
   *
   * @param kind The failure kind.
   * @param message What failed.
   * @param options Standard `ErrorOptions`.
   */
  constructor(kind: ProfileErrorKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

/**
 * An out-of-order graph capture call (CubeCL's `ServerError::Generic` graph
 * state errors). The stream's capture state is left unchanged.
 *
 * @example Usage
 * ```ts
 * import { GraphStateError } from "@denogpu/runtime";
 * const e = new GraphStateError("beginCapture", "call graphPrepare before beginCapture");
 * console.log(e.operation); // "beginCapture"
 * ```
 */
export class GraphStateError extends ServerError {
  /** The call that was refused. */
  readonly operation: string;

  /**
   * Builds the error.
   *
   * @param operation The refused call.
   * @param message Why it was refused.
   */
  constructor(operation: string, message: string) {
    super(`${operation}: ${message}`);
    this.operation = operation;
  }
}
