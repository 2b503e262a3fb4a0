/**
 * The consumer side of the command ring (see `command_ring.ts` for the
 * layout and the producer): what the worker reads records with.
 *
 * @module
 */

import type { RingBuffers } from "../wire/command_ring.ts";
import {
  HEAD,
  LAST_PAYLOAD,
  LOOP_STATE,
  SLEEP,
  SLOT_WORDS,
  STALLED_ON,
  TAIL,
  WANT_SPACE,
} from "../wire/ring_layout.ts";

/**
 * The consumer side, in the worker: `available()` slots are readable from
 * `at()`; `advance(n)` hands `n` of them back to the writer.
 */
export class RingReader {
  /** The ring's words. */
  readonly u32: Uint32Array;
  #ctl: Int32Array;
  #mask: number;
  #tail = 0;

  /**
   * Creates the reader.
   *
   * @param buffers The ring's shared memory.
   */
  constructor(buffers: RingBuffers) {
    this.#ctl = new Int32Array(buffers.control);
    this.u32 = new Uint32Array(buffers.slots);
    this.#mask = this.u32.length / SLOT_WORDS - 1;
  }

  /** Slots published and not yet consumed. */
  available(): number {
    return (Atomics.load(this.#ctl, HEAD) - this.#tail) | 0;
  }

  /** Index in `u32` of the next record's first word. */
  at(): number {
    return (this.#tail & this.#mask) * SLOT_WORDS;
  }

  /** Slots from the next record to the end of the ring (what a pad record skips). */
  toEnd(): number {
    return this.#mask + 1 - (this.#tail & this.#mask);
  }

  /**
   * Consumes `n` slots; the writer sees the room at the next `release()`.
   *
   * @param n Slots.
   */
  consume(n: number): void {
    this.#tail = (this.#tail + n) | 0;
  }

  /** Hands the consumed slots back to the writer. */
  release(): void {
    Atomics.store(this.#ctl, TAIL, this.#tail);
  }

  /**
   * Consumes `n` slots and hands them back at once.
   *
   * @param n Slots.
   */
  advance(n: number): void {
    this.consume(n);
    this.release();
  }

  /**
   * Notes where the reader's loop is, for diagnostics.
   *
   * @param state The state.
   * @param stalledOn The payload id it waits for (when stalled).
   */
  note(state: number, stalledOn = 0): void {
    Atomics.store(this.#ctl, LOOP_STATE, state);
    Atomics.store(this.#ctl, STALLED_ON, stalledOn);
  }

  /**
   * Notes the id of a payload received, for diagnostics.
   *
   * @param id The payload id.
   */
  received(id: number): void {
    Atomics.store(this.#ctl, LAST_PAYLOAD, id);
  }

  /** True once when the writer asked for a `space` message (the flag is cleared). */
  takeSpaceRequest(): boolean {
    return Atomics.load(this.#ctl, WANT_SPACE) !== 0 && Atomics.compareExchange(this.#ctl, WANT_SPACE, 1, 0) === 1;
  }

  /**
   * Waits until a record is published, without blocking the worker's event
   * loop; resolves at once when one already is.
   *
   * @returns Resolves when `available()` may be above 0.
   */
  async waitForRecords(): Promise<void> {
    const ctl = this.#ctl;
    Atomics.store(ctl, SLEEP, 1);
    const head = Atomics.load(ctl, HEAD);
    if (head === this.#tail) {
      const r = Atomics.waitAsync(ctl, HEAD, head);
      if (r.async) await r.value;
    }
    Atomics.store(ctl, SLEEP, 0);
  }
}
