/**
 * The error of collectives between devices (all-reduce, send and receive).
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";

/**
 * Why a collective failed:
 *
 * - `unknown-device`: the device set names a device that is not open;
 * - `not-a-participant`: the calling device is not in the device set;
 * - `mismatch`: participants of one slot disagree on the operation, the
 *   element type, the reduction or the byte count, or all-reduces over
 *   different device sets wait for each other (the participants named
 *   different sets, or called all-reduces of overlapping sets in different
 *   orders): reported as soon as the calls are seen, to every device that
 *   made one;
 * - `timeout`: a participant did not join within the timeout;
 * - `aborted`: a participant's `AbortSignal` fired before every participant joined;
 * - `device-lost`: a participant's device was lost or closed;
 * - `device-error`: a participant's device raised errors while reading its
 *   source or writing its result (its stream's queued errors, as the `cause`).
 */
export type CollectiveErrorReason =
  | "unknown-device"
  | "not-a-participant"
  | "mismatch"
  | "timeout"
  | "aborted"
  | "device-lost"
  | "device-error";

/**
 * A collective failed. Every participant of the failed call gets one with the
 * same `reason` and `culprit`; the devices stay usable, and later collectives
 * of the same devices run normally.
 *
 * A device missing from the failed call (one that had not called it yet when
 * it timed out, was aborted or mismatched) owes it a call, settled by its next
 * call of that kind on the same devices, at the end of the event-loop turn in
 * which it calls: when another participant has called the next round by
 * then, the device is taken to have skipped the failed one and joins the
 * next; when none has, that call is its late call for the failed round and
 * fails with the same `reason` and `culprit`, a message saying it came late,
 * and the round's own error as its `cause`. Its next call then takes part
 * normally.
 *
 * @example Usage
 * ```ts
 * import { CollectiveError } from "@denogpu/runtime";
 * const e = new CollectiveError("timeout", "allReduce: device cpu:1 did not join within 50 ms", { culprit: "cpu:1" });
 * console.log(e.reason, e.culprit); // "timeout" "cpu:1"
 * ```
 */
export class CollectiveError extends ServerError {
  /** Why it failed. */
  readonly reason: CollectiveErrorReason;
  /** The device at fault (`"kind:index"`, e.g. `"cpu:1"`), or null when none is (a mismatch). */
  readonly culprit: string | null;

  /**
   * Builds the error.
   *
   * @param reason Why it failed.
   * @param message What failed, for which devices, and what to do.
   * @param options The device at fault and an optional cause.
   */
  constructor(
    reason: CollectiveErrorReason,
    message: string,
    options: ErrorOptions & { culprit?: string | null } = {},
  ) {
    super(message, options);
    this.reason = reason;
    this.culprit = options.culprit ?? null;
  }
}
