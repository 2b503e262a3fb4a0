/**
 * Memory failures: transfers and pools (CubeCL's `IoError`), pool layouts
 * that cannot be installed, and pool configurations that can never be valid.
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";

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

/** Why {@linkcode InstallMemoryPoolsError} refused. */
export type InstallMemoryPoolsErrorKind = "pools-in-use" | "stream-unavailable" | "unsupported";

/**
 * `installMemoryPools` refused. `pools-in-use` is transient (release the live
 * handles and retry); the old layout stays in force. Unlike CubeCL, a refused
 * layout is not recorded for streams created afterwards.
 *
 * @example Usage
 * ```ts
 * import { InstallMemoryPoolsError } from "@denogpu/runtime";
 * const e = new InstallMemoryPoolsError("pools-in-use", "1 MiB still live", 1_048_576);
 * console.log(e.kind, e.bytesInUse); // "pools-in-use" 1048576
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
