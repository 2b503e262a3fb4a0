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
export type ProfileErrorKind = "unknown" | "not-registered" | "launch" | "server" | "trace";

/**
 * A profiling failure (CubeCL's `ProfileError`): an unknown or already ended
 * token (`not-registered`), an error drained while the profile was open, or
 * a trace file that could not be written (`trace`, a {@linkcode TraceWriteError}).
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
 * `profile(fn, { trace })` measured `fn` but could not write the Chrome trace
 * (kind `trace`): a missing directory, no write permission, a full disk. It
 * is how that `profile()` call rejects, after `fn` ran and its work was
 * measured, so nothing is lost: `profile` holds what `profile()` would have
 * resolved with (a `ProfileResult`, `fn`'s return value as its `result`),
 * `path` names the file, and `cause` is the file system's error. Write the
 * trace elsewhere from `profile.dispatches` (`chromeTrace`) instead of
 * running `fn` again.
 *
 * Why a rejection that carries the result: resolving would let a trace that
 * was asked for go missing unnoticed, and a bare rejection would lose work
 * already done. The path is not tried before `fn` runs: that would not make
 * the later write certain, and would clobber an existing file when `fn` fails.
 *
 * @example Usage
 * ```ts
 * import { ProfileError, TraceWriteError } from "@denogpu/runtime";
 * const e = new TraceWriteError("/no/dir/t.json", { result: 1 }, new Error("No such file or directory"));
 * console.log(e instanceof ProfileError, e.kind, e.path); // true "trace" "/no/dir/t.json"
 * ```
 *
 * @example Keep the measurements when the trace cannot be written
 * ```ts ignore
 * try {
 *   await client.profile(() => step(), { trace: "out/step.trace.json" });
 * } catch (e) {
 *   if (!(e instanceof TraceWriteError)) throw e;
 *   const p = e.profile as ProfileResult<void>;
 *   console.log(`no trace at ${e.path} (${e.cause}); ${p.nanos} ns`, p.kernels);
 * }
 * ```
 *
 * @typeParam P What was measured: `ProfileResult<T>` when `profile()` raises it.
 */
export class TraceWriteError<P = unknown> extends ProfileError {
  /** The trace file, as given (a URL as its `href`). */
  readonly path: string;
  /** The measurements and `fn`'s result, as `profile()` would have resolved with them. */
  readonly profile: P;

  /**
   * Builds the error.
   *
   * @param path The trace file that could not be written.
   * @param profile What was measured.
   * @param cause The file system's error.
   */
  constructor(path: string | URL, profile: P, cause: unknown) {
    const where = path instanceof URL ? path.href : String(path);
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      "trace",
      `profile: the Chrome trace could not be written to ${where} (${why}); the work ran and its measurements are in .profile`,
      { cause },
    );
    this.path = where;
    this.profile = profile;
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
