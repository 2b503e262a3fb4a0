/**
 * The error hierarchy of the runtime, mirroring CubeCL's `ServerError`,
 * `LaunchError`, `IoError`, `ProfileError` and `ResourceLimitError`.
 *
 * Two kinds of failure exist, and they surface in different places:
 *
 * - **Argument errors** (wrong types, out-of-range sizes, released handles,
 *   unknown streams or graphs) throw at once from the call that received them,
 *   as `TypeError`, `RangeError` or one of the classes below.
 * - **Device-side failures** of `launch`, `write` and `replay` never throw from
 *   those calls. They are queued on the stream and raised, all together, by the
 *   next `flush`, `sync`, `read`, profile or capture call on that stream as a
 *   {@linkcode ServerUnhealthyError}.
 *
 * @module
 */

/**
 * Base class of every error the runtime raises on purpose.
 *
 * @example Usage
 * ```ts
 * import { ServerError } from "@denogpu/runtime";
 * const e = new ServerError("something failed");
 * console.log(e instanceof Error, e.name); // true "ServerError"
 * ```
 */
export class ServerError extends Error {
  /**
   * Builds the error.
   *
   * @param message What failed, on which labelled object, and what to do.
   * @param options Standard `ErrorOptions`; `cause` keeps the underlying error.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A WebGPU validation error reported by the device (CubeCL's
 * `ServerError::Validation`). The original `GPUError` is the `cause`.
 *
 * @example Usage
 * ```ts
 * import { DeviceValidationError } from "@denogpu/runtime";
 * const e = new DeviceValidationError("binding 2 is too small");
 * console.log(e.name); // "DeviceValidationError"
 * ```
 */
export class DeviceValidationError extends ServerError {}

/**
 * The device was lost or destroyed. Every pending promise of the client rejects
 * with it, and every later call throws it. Create a new client to continue.
 *
 * @example Usage
 * ```ts
 * import { DeviceLostError } from "@denogpu/runtime";
 * const e = new DeviceLostError("device was destroyed", { reason: "destroyed" });
 * console.log(e.reason); // "destroyed"
 * ```
 */
export class DeviceLostError extends ServerError {
  /** `"destroyed"` when the runtime or the user destroyed the device, else `"unknown"`. */
  readonly reason: "destroyed" | "unknown";

  /**
   * Builds the error.
   *
   * @param message What was lost.
   * @param options The loss reason and an optional cause.
   */
  constructor(message: string, options: ErrorOptions & { reason: "destroyed" | "unknown" }) {
    super(message, options);
    this.reason = options.reason;
  }
}

/**
 * A feature of the contract that this runtime, or this device, does not offer
 * (yet). The message names the method and says what to use instead.
 *
 * @example Usage
 * ```ts
 * import { UnsupportedError } from "@denogpu/runtime";
 * const e = new UnsupportedError("commInit: collectives are not supported");
 * console.log(e.name); // "UnsupportedError"
 * ```
 */
export class UnsupportedError extends ServerError {}

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

/**
 * A request exceeded a device limit (CubeCL's `ResourceLimitError`). The
 * message names the limit, the requested value and the maximum.
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
   */
  constructor(
    limit: ResourceLimitKind,
    kernel: string,
    requested: readonly number[],
    max: readonly number[],
    limitName: string,
  ) {
    super(
      "too-many-resources",
      kernel,
      `${kernel}: requested ${requested.join("×")} exceeds the device limit ${limitName} = ${max.join("×")}`,
    );
    this.limit = limit;
    this.requested = requested;
    this.max = max;
  }
}

/** What went wrong in an {@linkcode IoError} (CubeCL's `IoError` variants). */
export type IoErrorKind =
  | "buffer-too-big"
  | "out-of-memory"
  | "pool-capacity-exceeded"
  | "unsupported-strides"
  | "not-found"
  | "storage-handle-not-found"
  | "storage-mapping-failed"
  | "unsupported-io-operation"
  | "unknown";

/**
 * A memory or transfer failure (CubeCL's `IoError`).
 *
 * - `buffer-too-big`: no pool can ever hold the size.
 * - `out-of-memory`: the driver has no memory now; retry after a cleanup.
 * - `pool-capacity-exceeded`: a capped pool is full (`capacity`, `inUse`).
 * - `unsupported-strides`: only contiguous row-major copies are supported.
 * - `not-found`: a handle's location is stale or was never initialised.
 *
 * @example Usage
 * ```ts
 * import { IoError } from "@denogpu/runtime";
 * const e = new IoError("pool-capacity-exceeded", "pool full", { size: 1024, capacity: 2048, inUse: 2048 });
 * console.log(e.kind, e.capacity); // "pool-capacity-exceeded" 2048
 * ```
 */
export class IoError extends ServerError {
  /** The failure kind. */
  readonly kind: IoErrorKind;
  /** The size involved, in bytes, when there is one. */
  readonly size?: number;
  /** The capacity of a capped pool, in bytes. */
  readonly capacity?: number;
  /** Bytes in use in a capped pool when it refused. */
  readonly inUse?: number;

  /**
   * Builds the error.
   *
   * @param kind The failure kind.
   * @param message What failed.
   * @param details Sizes in bytes, and an optional cause.
   */
  constructor(
    kind: IoErrorKind,
    message: string,
    details: { size?: number; capacity?: number; inUse?: number; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.size = details.size;
    this.capacity = details.capacity;
    this.inUse = details.inUse;
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

/** Why {@linkcode InstallMemoryPoolsError} refused. */
export type InstallMemoryPoolsErrorKind = "pools-in-use" | "stream-unavailable" | "unsupported";

/**
 * `installMemoryPools` refused. `pools-in-use` is transient (release the live
 * handles and retry); the old layout stays in force. In every case the new
 * layout is recorded for streams created afterwards.
 *
 * @example Usage
 * ```ts
 * import { InstallMemoryPoolsError } from "@denogpu/runtime";
 * const e = new InstallMemoryPoolsError("pools-in-use", "1 MB still live", 1_000_000);
 * console.log(e.kind, e.bytesInUse); // "pools-in-use" 1000000
 * ```
 */
export class InstallMemoryPoolsError extends ServerError {
  /** Why it refused. */
  readonly kind: InstallMemoryPoolsErrorKind;
  /** Bytes still live in the dynamic pools, for `pools-in-use`. */
  readonly bytesInUse: number;

  /**
   * Builds the error.
   *
   * @param kind Why it refused.
   * @param message Details.
   * @param bytesInUse Live bytes, for `pools-in-use`.
   */
  constructor(kind: InstallMemoryPoolsErrorKind, message: string, bytesInUse = 0) {
    super(message);
    this.kind = kind;
    this.bytesInUse = bytesInUse;
  }
}

/** Why a {@linkcode PoolConfigError} was raised (CubeCL's `PoolConfigError`). */
export type PoolConfigErrorKind =
  | "empty-pool-list"
  | "zero-size"
  | "slice-larger-than-page"
  | "cap-smaller-than-page"
  | "too-many-pages"
  | "too-many-pools"
  | "page-too-large"
  | "preset-unavailable";

/**
 * A memory pool configuration that can never be valid. Raised synchronously
 * when the configuration is resolved against the device.
 *
 * @example Usage
 * ```ts
 * import { PoolConfigError } from "@denogpu/runtime";
 * const e = new PoolConfigError("empty-pool-list", "no pools given");
 * console.log(e.kind); // "empty-pool-list"
 * ```
 */
export class PoolConfigError extends ServerError {
  /** Why the configuration is invalid. */
  readonly kind: PoolConfigErrorKind;

  /**
   * Builds the error.
   *
   * @param kind Why the configuration is invalid.
   * @param message Details naming the offending field.
   */
  constructor(kind: PoolConfigErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}
