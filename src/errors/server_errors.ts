/**
 * The base of the error hierarchy, {@linkcode ServerError}, and the errors of
 * the device itself: validation, loss, and features it does not offer.
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
