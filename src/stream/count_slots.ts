/**
 * Which copied indirect counts a stream's indirect count buffer still holds.
 * A count that lives in a page the launch also binds as storage is copied,
 * in the open pass, into one of `COUNT_SLOTS` slots of the stream's indirect
 * count buffer (`IndirectCounts`), each `stride` bytes apart so that the
 * copy can bind any slot through a dynamic offset. A slot stays valid while
 * every dispatch encoded after its copy provably leaves the count's 12 bytes
 * unchanged; a later launch from the same count then dispatches from the slot
 * with no copy. Launches that alternate between a few such counts copy each
 * once per pass.
 *
 * Everything that cannot prove it leaves a count alone forgets every slot:
 * a dispatch with a static count or a count read in place, a graph replay,
 * the end of the pass (copies and writes of the page are encoder commands
 * or queue writes, which come after the pass ends).
 *
 * @module
 */

import { countSlotStride } from "../kernel/count_copy.ts";

/** Slots of a stream's indirect count buffer. */
export const COUNT_SLOTS = 8;

/** The slots of one stream's indirect count buffer and the counts they hold. */
export class CountSlots {
  /** Bytes between slots: `minStorageBufferOffsetAlignment`, at least 16. */
  readonly stride: number;
  /** Bit `k` set: slot `k` holds the count at byte `ats[k]` of storage `ids[k]`. */
  valid = 0;
  /**
   * The slot the dispatch being encoded (or the last one) reads: set by
   * `claim`, or by the caller that found its count there; used by `after`.
   */
  placed = 0;
  /** Storage id of the count slot `k` holds (while valid). */
  readonly ids: Int32Array = new Int32Array(COUNT_SLOTS);
  /** Byte offset of the count slot `k` holds, in its storage (while valid). */
  readonly ats: Float64Array = new Float64Array(COUNT_SLOTS);
  /**
   * The bind group whose bindings slot `k`'s count was last tested against
   * (`IndirectCounts`), or null; forgotten when the slot takes another count.
   */
  readonly groups: (GPUBindGroup | null)[] = new Array(COUNT_SLOTS).fill(null);
  /** What that test answered for slot `k`: 1 a binding covers the count, 0 none covers it but one binds its buffer, -1 none binds its buffer. */
  readonly covers: Int8Array = new Int8Array(COUNT_SLOTS);
  #next = 0;

  /**
   * Creates the table (every slot empty).
   *
   * @param alignment `minStorageBufferOffsetAlignment`.
   */
  constructor(alignment: number) {
    this.stride = countSlotStride(alignment);
  }

  /** The bytes of the buffer holding the slots. */
  get bufferSize(): number {
    return (COUNT_SLOTS - 1) * this.stride + 16;
  }

  /**
   * The slot holding the count at byte `at` of storage `id`, or -1.
   *
   * @param id The storage id of the count's buffer.
   * @param at The count's byte offset in it.
   * @returns The slot, or -1.
   */
  find(id: number, at: number): number {
    let bits = this.valid;
    while (bits !== 0) {
      const k = 31 - Math.clz32(bits & -bits); // the lowest valid slot left
      if (this.ids[k] === id && this.ats[k] === at) return k;
      bits &= bits - 1;
    }
    return -1;
  }

  /**
   * The slot a new copy goes to: an empty one, else the next in turn; it
   * becomes the placed slot.
   *
   * @returns The slot.
   */
  claim(): number {
    const free = ~this.valid & ((1 << COUNT_SLOTS) - 1);
    let k: number;
    if (free !== 0) k = 31 - Math.clz32(free & -free);
    else {
      k = this.#next;
      this.#next = (k + 1) % COUNT_SLOTS;
    }
    this.placed = k;
    return k;
  }

  /**
   * Records the dispatch just encoded from the placed slot: the slots it
   * spares stay valid, and the placed one holds its count when the dispatch
   * leaves it unchanged (`kept`).
   *
   * @param id The storage id of the count's buffer.
   * @param at The count's byte offset in it.
   * @param kept Whether the dispatch leaves its own count unchanged.
   * @param spares The valid slots it leaves unchanged (bit `k` set: slot `k`'s count is not covered by its bindings).
   */
  after(id: number, at: number, kept: boolean, spares: number): void {
    const k = this.placed;
    const bit = 1 << k;
    let valid = this.valid & spares & ~bit;
    if (kept) {
      if (this.ids[k] !== id || this.ats[k] !== at) this.groups[k] = null; // another count: its test is not known
      this.ids[k] = id;
      this.ats[k] = at;
      valid |= bit;
    }
    this.valid = valid;
  }
}
