/**
 * The graph capture lifecycle of one stream, as a state machine (CubeCL's
 * `StreamCaptureState`): `none → prepared → recording → none`. A refused
 * transition throws `GraphStateError` and changes nothing; `abort` always
 * returns to `none`.
 *
 * @module
 */

import { GraphStateError } from "../errors.ts";

/** Where a stream is in the capture lifecycle. */
export type CaptureState = "none" | "prepared" | "recording";

/** The capture state of one stream. */
export class CaptureStateMachine {
  #state: CaptureState = "none";

  /** The current state. */
  get state(): CaptureState {
    return this.#state;
  }

  /** True while prepared or recording (memory is routed to the persistent pool). */
  get armed(): boolean {
    return this.#state !== "none";
  }

  /**
   * `none → prepared`.
   *
   * @throws {GraphStateError} When already prepared or recording.
   */
  prepare(): void {
    if (this.#state !== "none") throw new GraphStateError("graphPrepare", `the stream is already ${this.#state}`);
    this.#state = "prepared";
  }

  /**
   * Checks that `begin` would be accepted, without changing the state.
   *
   * @throws {GraphStateError} When not prepared.
   */
  checkBegin(): void {
    if (this.#state === "none") {
      throw new GraphStateError("beginCapture", "call graphPrepare before beginCapture");
    }
    if (this.#state === "recording") throw new GraphStateError("beginCapture", "the stream is already recording");
  }

  /**
   * `prepared → recording`.
   *
   * @throws {GraphStateError} When not prepared.
   */
  begin(): void {
    this.checkBegin();
    this.#state = "recording";
  }

  /**
   * `recording → none`.
   *
   * @throws {GraphStateError} When not recording.
   */
  end(): void {
    if (this.#state !== "recording") {
      throw new GraphStateError("endCapture", "the stream is not recording; call beginCapture first");
    }
    this.#state = "none";
  }

  /** Any state → `none`. */
  abort(): void {
    this.#state = "none";
  }
}
