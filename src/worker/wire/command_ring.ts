/**
 * A single-producer, single-consumer command ring over `SharedArrayBuffer`s:
 * the main thread writes records (`RingWriter`), the worker reads them
 * (`RingReader`). Records are whole 64-byte slots (`ring_layout.ts`); a
 * record never wraps: the writer pads to the end of the ring first.
 *
 * Publishing a record is one `Atomics.store` of the head, plus an
 * `Atomics.notify` only when the reader said it sleeps (its flag is cleared
 * with a compare-and-exchange, so one wake-up per sleep). Nothing is
 * allocated per record.
 *
 * **When the ring is full** the writer never blocks: records spill, in order,
 * into chunks in main-thread memory, and every later record follows them
 * there until the spill has moved back into the ring. It moves back at the
 * next record written once the reader has made room, or when the reader,
 * seeing the writer's `WANT_SPACE` flag after consuming, posts a `space`
 * message. So the main thread keeps its event loop while the worker is
 * blocked in a long device wait, at the cost of memory for what it queues
 * meanwhile; the order of records is kept whatever the path.
 *
 * @module
 */

import {
  CONTROL_WORDS,
  HEAD,
  header,
  LAST_PAYLOAD,
  LOOP_STATE,
  Op,
  SLEEP,
  SLOT_WORDS,
  slotsOf,
  STALLED_ON,
  TAIL,
  WANT_SPACE,
} from "./ring_layout.ts";

/** The shared memory of one ring. */
export interface RingBuffers {
  /** The control block (`CONTROL_WORDS` 32-bit words). */
  readonly control: SharedArrayBuffer;
  /** The slots. */
  readonly slots: SharedArrayBuffer;
}

/**
 * Allocates the shared memory of a ring.
 *
 * @param slots Slots in the ring, a power of two of at least 64.
 * @returns The buffers.
 * @throws {RangeError} When `slots` is not a power of two of at least 64.
 */
export function allocateRing(slots: number): RingBuffers {
  if (!Number.isSafeInteger(slots) || slots < 64 || (slots & (slots - 1)) !== 0) {
    throw new RangeError(`ring: slots must be a power of two of at least 64, got ${slots}`);
  }
  return {
    control: new SharedArrayBuffer(CONTROL_WORDS * 4),
    slots: new SharedArrayBuffer(slots * SLOT_WORDS * 4),
  };
}

/** Records spilled while the ring was full, as linear slots. */
interface SpillChunk {
  u32: Uint32Array<ArrayBuffer>;
  f32: Float32Array<ArrayBuffer>;
  i32: Int32Array<ArrayBuffer>;
  /** Slots written. */
  used: number;
  /** Slots moved back into the ring. */
  read: number;
}

const SPILL_CHUNK_SLOTS = 4096;
/** Slots written before the head is published without waiting for the end of the task. */
const PUBLISH_EVERY = 32;

/**
 * The producer side, on the main thread. Write a record as: `at =
 * reserve(n)`, then store its words into `u32` (or `f32`, `i32`, views of
 * the same memory) from `at`, then `commit()`. The target arrays change
 * between the ring and a spill chunk: read them after `reserve`.
 *
 * Committed records are published (the head stored, a sleeping reader woken)
 * every `PUBLISH_EVERY` slots, and at the end of the current task (a
 * microtask), whichever comes first: a loop of launches pays one atomic
 * store per 32 slots, and the reader never waits past the task that wrote.
 */
export class RingWriter {
  /** Where the reserved record is written (the ring, or a spill chunk). */
  u32: Uint32Array;
  /** `u32` as f32. */
  f32: Float32Array;
  /** `u32` as i32. */
  i32: Int32Array;
  /** Records spilled since the writer was made, in slots (a counter for tests and benches). */
  spillCount = 0;
  #ring: Uint32Array;
  #ringF32: Float32Array;
  #ringI32: Int32Array;
  #ctl: Int32Array;
  #slots: number;
  #mask: number;
  #head = 0;
  #published = 0;
  #scheduled = false;
  #tail = 0;
  #pending = 0;
  #inSpill = false;
  #spill: SpillChunk[] = [];
  #spilled = 0;
  #flush = (): void => {
    this.#scheduled = false;
    if (this.#published !== this.#head) this.#publish();
  };

  /**
   * Creates the writer.
   *
   * @param buffers The ring's shared memory.
   */
  constructor(buffers: RingBuffers) {
    this.#ctl = new Int32Array(buffers.control);
    this.u32 = this.#ring = new Uint32Array(buffers.slots);
    this.f32 = this.#ringF32 = new Float32Array(buffers.slots);
    this.i32 = this.#ringI32 = new Int32Array(buffers.slots);
    this.#slots = this.#ring.length / SLOT_WORDS;
    this.#mask = this.#slots - 1;
  }

  /** Slots of the ring. */
  get capacity(): number {
    return this.#slots;
  }

  /** Slots waiting in spill chunks (0 unless the ring was full). */
  get spilled(): number {
    return this.#spilled;
  }

  /**
   * Publishes what is committed, then counts the slots written and not yet
   * consumed by the reader, spilled ones included.
   *
   * @returns The slots.
   */
  backlog(): number {
    this.flush();
    return ((this.#head - Atomics.load(this.#ctl, TAIL)) | 0) + this.#spilled;
  }

  /** @ignore The ring's positions and flags, for diagnostics. */
  state(): Record<
    "head" | "published" | "tail" | "sleep" | "want" | "spilled" | "loop" | "stalledOn" | "lastPayload",
    number
  > {
    const ctl = this.#ctl;
    return {
      head: this.#head,
      published: this.#published,
      tail: Atomics.load(ctl, TAIL),
      sleep: Atomics.load(ctl, SLEEP),
      want: Atomics.load(ctl, WANT_SPACE),
      spilled: this.#spilled,
      loop: Atomics.load(ctl, LOOP_STATE),
      stalledOn: Atomics.load(ctl, STALLED_ON),
      lastPayload: Atomics.load(ctl, LAST_PAYLOAD),
    };
  }

  /**
   * Blocks until the reader's loop notes `state`, at most `ms` (for the end
   * of the process, when no event loop turn may come).
   *
   * @param state The `LoopState` awaited.
   * @param ms The longest wait.
   * @returns True when the loop noted it.
   */
  waitForLoop(state: number, ms: number): boolean {
    const ctl = this.#ctl;
    const end = performance.now() + ms;
    for (let v = Atomics.load(ctl, LOOP_STATE); v !== state; v = Atomics.load(ctl, LOOP_STATE)) {
      const left = end - performance.now();
      if (left <= 0) return false;
      Atomics.wait(ctl, LOOP_STATE, v, Math.min(left, 1));
    }
    return true;
  }

  /** Publishes every committed record now. */
  flush(): void {
    if (this.#published !== this.#head) this.#publish();
  }

  /**
   * Reserves `n` slots for the next record.
   *
   * @param n Slots (at most a quarter of the ring).
   * @returns The index in `u32` of the record's first word.
   */
  reserve(n: number): number {
    this.#pending = n;
    if (this.#spilled === 0 || this.#unspill()) {
      const at = this.#place(n);
      if (at >= 0) {
        if (this.#inSpill) this.#target(false);
        return at;
      }
    }
    return this.#reserveSpill(n);
  }

  /** Commits the reserved record (published with the next batch). */
  commit(): void {
    const n = this.#pending;
    if (this.#inSpill) {
      this.#spill[this.#spill.length - 1]!.used += n;
      this.#spilled += n;
      this.spillCount += n;
      // The reader may have made room since: move what fits, or leave it asked for a `space` message.
      this.#unspill();
      return;
    }
    const head = this.#head = (this.#head + n) | 0;
    if (((head - this.#published) | 0) >= PUBLISH_EVERY) {
      this.#publish();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flush);
    }
  }

  /**
   * Moves spilled records back into the ring as far as room allows (on the
   * reader's `space` message).
   *
   * @returns True when nothing is left spilled.
   */
  drainSpill(): boolean {
    return this.#spilled === 0 || this.#unspill();
  }

  /** Points the target arrays at the ring, or at the last spill chunk. */
  #target(spill: boolean): void {
    this.#inSpill = spill;
    if (spill) {
      const chunk = this.#spill[this.#spill.length - 1]!;
      this.u32 = chunk.u32;
      this.f32 = chunk.f32;
      this.i32 = chunk.i32;
    } else {
      this.u32 = this.#ring;
      this.f32 = this.#ringF32;
      this.i32 = this.#ringI32;
    }
  }

  #publish(): void {
    const ctl = this.#ctl;
    this.#published = this.#head;
    Atomics.store(ctl, HEAD, this.#head);
    if (Atomics.load(ctl, SLEEP) !== 0 && Atomics.compareExchange(ctl, SLEEP, 1, 0) === 1) {
      Atomics.notify(ctl, HEAD);
    }
  }

  /** Room for `n` slots at the head, padding to the end of the ring first when needed; -1 when full. */
  #place(n: number): number {
    const slots = this.#slots;
    const at = this.#head & this.#mask;
    const toEnd = slots - at;
    const need = n <= toEnd ? n : toEnd + n;
    if (slots - ((this.#head - this.#tail) | 0) < need) {
      this.#tail = Atomics.load(this.#ctl, TAIL);
      if (slots - ((this.#head - this.#tail) | 0) < need) {
        this.flush(); // the reader must see everything before the writer waits for room
        return -1;
      }
    }
    if (n > toEnd) {
      this.#ring[at * SLOT_WORDS] = header(Op.pad, 0); // the reader skips to the end of the ring
      this.#head = (this.#head + toEnd) | 0;
      return 0;
    }
    return at * SLOT_WORDS;
  }

  #reserveSpill(n: number): number {
    const last = this.#spill[this.#spill.length - 1];
    if (last === undefined || last.used + n > last.u32.length / SLOT_WORDS) {
      const buffer = new ArrayBuffer(Math.max(SPILL_CHUNK_SLOTS, n) * SLOT_WORDS * 4);
      this.#spill.push({
        u32: new Uint32Array(buffer),
        f32: new Float32Array(buffer),
        i32: new Int32Array(buffer),
        used: 0,
        read: 0,
      });
    }
    this.#target(true);
    return this.#spill[this.#spill.length - 1]!.used * SLOT_WORDS;
  }

  /** Moves whole spilled records into the ring while they fit; true when the spill is empty. */
  #unspill(): boolean {
    let moved = false;
    while (this.#spill.length > 0) {
      const chunk = this.#spill[0]!;
      while (chunk.read < chunk.used) {
        const from = chunk.read * SLOT_WORDS;
        const n = slotsOf(chunk.u32[from]!);
        let at = this.#place(n);
        if (at < 0) {
          // Ask, then look again: either the reader sees the flag after it consumes what it still
          // has, or it consumed everything before the flag and the room shows now.
          Atomics.store(this.#ctl, WANT_SPACE, 1);
          at = this.#place(n);
          if (at < 0) return false;
        }
        this.#ring.set(chunk.u32.subarray(from, from + n * SLOT_WORDS), at);
        this.#head = (this.#head + n) | 0;
        chunk.read += n;
        this.#spilled -= n;
        moved = true;
      }
      this.#spill.shift();
    }
    if (moved) this.#publish();
    Atomics.store(this.#ctl, WANT_SPACE, 0);
    return true;
  }
}
