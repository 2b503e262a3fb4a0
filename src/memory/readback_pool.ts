/**
 * `MAP_READ` staging buffers for read-backs, reused by size class, and the
 * two ways of mapping one.
 *
 * - The spec path awaits `mapAsync`, which Deno 2.9 resolves at least 10 ms
 *   after the device is done (deno-webgpu.md §1).
 * - The early path (fast reads) does not await it: Deno's `mapAsync()` polls
 *   the device until the mapping is done before it returns, and its
 *   `getMappedRange` does not check the map state, so the bytes can be read
 *   at once. Only a buffer that has been through one awaited map cycle may be
 *   mapped early (Deno panics on a buffer never mapped). The promise left
 *   over by an early map is observed, the buffer is not mapped again (nor
 *   destroyed) before it settles, and it is "cooling" until then.
 *
 * Sizes are classes of four per doubling from 256 B (a buffer at most 19%
 * larger than asked; one exactly as large above `maxBufferSize`'s classes).
 * Idle buffers are kept per class up to 16 MiB of them (4 to 1,024 buffers;
 * one from 64 MiB): fast reads rotate through many small buffers while each
 * cools (a read every 40 µs keeps ~300 of them busy).
 *
 * A read that finds no buffer ready to map early takes the spec path (11 ms),
 * so fast reads keep a stock ahead of demand: the classes small reads and
 * syncs use are primed when fast reads start (`stock`), and a class grows
 * (doubles, within what it keeps) as soon as three quarters of its idle
 * buffers are found cooling, before it runs out; its new buffers are primed while the
 * rest cover the ~11 ms a priming takes.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { formatBytesExact } from "../_util/format.ts";

const MiB = 1024 * 1024;
/** Smallest class, in bytes (the class of a `sync`'s probe). */
export const MIN_CLASS = 256;
/** Idle bytes kept per class. */
const KEEP_BYTES = 16 * MiB;
/** Milliseconds a priming takes (an awaited map: Deno's fixed 10 ms wait, rounded up), with a margin. */
const PRIMING_MS = 15;

/** The size class holding `size` bytes: four per doubling from 256 B, or `size` itself (word-aligned) past `max`. */
export function readbackClass(size: number, max: number): number {
  if (size <= MIN_CLASS) return MIN_CLASS;
  let k = Math.ceil(Math.log2(size) * 4);
  while (2 ** ((k - 1) / 4) >= size) k--; // log2 may land a few ulps above an exact class
  const cls = alignUp(Math.ceil(2 ** (k / 4)), MIN_CLASS);
  return cls > max ? alignUp(size, 4) : cls;
}

/** One `MAP_READ | COPY_DST` buffer lent for read-backs. */
export class ReadbackBuffer {
  /** The buffer. */
  readonly buffer: GPUBuffer;
  /** Its size, in bytes. */
  readonly size: number;
  #primed = false;
  #leftover: Promise<void> | null = null;
  #early = false;
  #doomed = false;
  /** `performance.now()` of its latest early map. */
  mappedAt = 0;
  /** Told of every early map (its pool watches how long leftovers stay pending). */
  onEarlyMap: ((b: ReadbackBuffer) => void) | null = null;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param size Bytes.
   * @param label The GPU label.
   */
  constructor(device: GPUDevice, size: number, label: string) {
    this.size = size;
    this.buffer = device.createBuffer({ label, size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** True once an awaited map of it has completed: it may be mapped early. */
  get primed(): boolean {
    return this.#primed;
  }

  /** True while the promise of its last early map is pending: it may not be mapped or destroyed yet. */
  get cooling(): boolean {
    return this.#leftover !== null;
  }

  /** True when its current mapping was made early (its promise has not settled). */
  get mappedEarly(): boolean {
    return this.#early;
  }

  /**
   * Maps bytes `[0, bytes)` for reading. With `early` on a primed buffer that
   * is not cooling, the mapping is complete when this returns (null); else
   * the returned promise settles when it is (the spec path, which primes it).
   *
   * @param bytes Bytes to map (a multiple of 4).
   * @param early Map early when the buffer allows it.
   * @returns Null when mapped early, else the awaited map.
   */
  map(bytes: number, early: boolean): Promise<void> | null {
    if (early && this.#primed && this.#leftover === null) {
      const settle = () => {
        this.#leftover = null;
        this.#early = false;
        if (this.#doomed) this.buffer.destroy();
      };
      // Observed, never awaited by the read: it settles ~10 ms later, and a rejection (device loss) is not unhandled.
      this.#leftover = this.buffer.mapAsync(GPUMapMode.READ, 0, bytes).then(settle, settle);
      this.#early = true;
      this.mappedAt = performance.now();
      this.onEarlyMap?.(this);
      return null;
    }
    const prime = () => {
      this.#primed = true;
    };
    if (this.#leftover === null) return this.buffer.mapAsync(GPUMapMode.READ, 0, bytes).then(prime);
    // Ordered after the leftover of an early map (the pool never lends a cooling buffer; this is a safety net).
    return this.#leftover.then(() => this.buffer.mapAsync(GPUMapMode.READ, 0, bytes)).then(prime);
  }

  /**
   * Primes it: one awaited map cycle, after which it may be mapped early. It
   * is cooling (not lent) until then.
   */
  prime(): void {
    if (this.#primed || this.#leftover !== null) return;
    const done = () => {
      this.#leftover = null;
      if (this.#doomed) this.buffer.destroy();
    };
    this.#leftover = this.buffer.mapAsync(GPUMapMode.READ).then(() => {
      this.buffer.unmap();
      this.#primed = true;
    }).then(done, done);
  }

  /** Settles when the leftover of an early map has (at once when there is none). */
  settled(): Promise<void> {
    return this.#leftover ?? Promise.resolve();
  }

  /** Unmaps it (its mapped ranges are detached). */
  unmap(): void {
    this.buffer.unmap();
  }

  /** Destroys it, at once or when its leftover map settles. */
  destroy(): void {
    if (this.#leftover !== null) this.#doomed = true;
    else this.buffer.destroy();
  }
}

/** Read-back staging buffers of one stream. */
export class ReadbackPool {
  #device: GPUDevice;
  #label: string;
  #maxBufferSize: number;
  #free = new Map<number, ReadbackBuffer[]>();
  /** Buffers alive per class, lent or idle. */
  #population = new Map<number, number>();
  /** Per class: when it may grow again (its last growth's buffers are primed by then). */
  #growAfter = new Map<number, number>();
  /** Buffers to create and prime per class (fast reads found every one cooling). */
  #wanted = new Map<number, number>();
  /** Buffers mapped early, oldest first, from `#head` on (settled ones are dropped as found). */
  #early: ReadbackBuffer[] = [];
  #head = 0;
  #onEarlyMap = (b: ReadbackBuffer): void => {
    this.#early.push(b);
  };
  #created = 0;
  #fallbacks = 0;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param options Label prefix of the buffers, and the device's `maxBufferSize`.
   */
  constructor(device: GPUDevice, options: { label: string; maxBufferSize: number }) {
    this.#device = device;
    this.#label = options.label;
    this.#maxBufferSize = options.maxBufferSize;
  }

  /** Buffers created so far. */
  get created(): number {
    return this.#created;
  }

  /** Early requests that found no buffer ready and took the spec path. */
  get fallbacks(): number {
    return this.#fallbacks;
  }

  /** Bytes held by idle buffers. */
  get heldBytes(): number {
    let n = 0;
    for (const [cls, list] of this.#free) n += cls * list.length;
    return n;
  }

  /** The class a request of `size` bytes gets. */
  classOf(size: number): number {
    return readbackClass(size, this.#maxBufferSize);
  }

  /**
   * Lends an unmapped buffer of at least `size` bytes. With `early`, one that
   * can be mapped early is preferred (primed, not cooling), of its class or
   * of one of the next eight (up to 4x the size); a cooling buffer is never
   * lent (a submit that writes one fails validation: "still mapped").
   *
   * @param size Bytes needed.
   * @param early Prefer a buffer that can be mapped early.
   * @returns The buffer.
   */
  acquire(size: number, early = false): ReadbackBuffer {
    const cls = this.classOf(size);
    const list = this.#free.get(cls);
    const idle = list === undefined ? -1 : findFree(list, false);
    if (!early) return idle >= 0 ? list!.splice(idle, 1)[0]! : this.#create(cls);
    const ready = list === undefined ? -1 : findFree(list, true);
    if (ready >= 0) {
      // Three quarters of the class's idle buffers cooling (those past `ready`): grow it now, before it runs
      // out (once per priming: buffers being primed count as cooling until their map settles).
      if (4 * (list!.length - 1 - ready) >= 3 * list!.length && !this.#wanted.has(cls)) {
        const now = performance.now();
        if (now >= (this.#growAfter.get(cls) ?? 0)) {
          this.#growAfter.set(cls, now + PRIMING_MS);
          this.#want(cls);
        }
      }
      return list!.splice(ready, 1)[0]!;
    }
    // None of its class is ready: one of the next classes up (up to 4x the size) will do, mapped over `size` only.
    let up = cls;
    for (let k = 0; k < 8; k++) {
      up = this.classOf(up + 1);
      const l = this.#free.get(up);
      const i = l === undefined ? -1 : findFree(l, true);
      if (i >= 0) return l!.splice(i, 1)[0]!;
    }
    // Fast reads found no buffer ready to map early: this read takes the spec path, and more are primed. A
    // cooling buffer is never lent: Deno reports it "still mapped" to a submit until its leftover map settles.
    this.#want(cls);
    this.#fallbacks++;
    return idle >= 0 ? list!.splice(idle, 1)[0]! : this.#create(cls);
  }

  /**
   * Creates and primes the buffers fast reads asked for when they found none
   * ready (each priming maps once and waits; call it once the device is idle,
   * after a batch's own maps, so that the maps' synchronous polls cost
   * nothing).
   */
  primeWanted(): void {
    for (const [cls, n] of this.#wanted) {
      let list = this.#free.get(cls);
      if (list === undefined) this.#free.set(cls, list = []);
      for (let i = 0; i < n && list.length < keepOf(cls); i++) {
        const b = this.#create(cls);
        b.prime();
        list.push(b);
      }
    }
    this.#wanted.clear();
  }

  /**
   * Creates and primes `n` buffers of each class of `sizes` (within what a
   * class keeps), so fast reads of those sizes find buffers ready from their
   * first read. Call it when fast reads turn on.
   *
   * @param sizes Request sizes whose classes to stock.
   * @param n Buffers per class.
   */
  stock(sizes: readonly number[], n: number): void {
    for (const size of sizes) {
      const cls = this.classOf(size);
      let list = this.#free.get(cls);
      if (list === undefined) this.#free.set(cls, list = []);
      for (let have = this.#population.get(cls) ?? 0; have < n && list.length < keepOf(cls); have++) {
        const b = this.#create(cls);
        b.prime();
        list.push(b);
      }
    }
  }

  /** Asks for as many new buffers of a class as it has (at least 2, within what it keeps): the class doubles. */
  #want(cls: number): void {
    const have = this.#population.get(cls) ?? 0;
    this.#wanted.set(cls, Math.max(2, Math.min(have, keepOf(cls) - have)));
  }

  #create(cls: number): ReadbackBuffer {
    this.#created++;
    this.#population.set(cls, (this.#population.get(cls) ?? 0) + 1);
    const b = new ReadbackBuffer(
      this.#device,
      cls,
      `${this.#label} readback ${formatBytesExact(cls)} #${this.#created}`,
    );
    b.onEarlyMap = this.#onEarlyMap;
    return b;
  }

  /**
   * True when a buffer mapped early at least `ms` ago is still cooling. Its
   * leftover map has long finished in Deno, but its promise settles only when
   * the event loop turns, and a loop of fast reads awaits nothing but
   * microtasks: the caller should let one macrotask pass, or every buffer
   * ends up cooling and reads fall back to the spec path.
   *
   * @param ms Age, in milliseconds. @default 25
   */
  overdue(ms = 12): boolean {
    const early = this.#early;
    while (this.#head < early.length && !early[this.#head]!.cooling) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > early.length) {
      early.splice(0, this.#head);
      this.#head = 0;
    }
    return this.#head < early.length && performance.now() - early[this.#head]!.mappedAt >= ms;
  }

  #destroy(b: ReadbackBuffer): void {
    this.#population.set(b.size, (this.#population.get(b.size) ?? 1) - 1);
    b.destroy();
  }

  /**
   * Waits until every command submitted so far has finished, through the map
   * of a small staging buffer: `mapAsync()` returns only once Deno has polled
   * the device to idle, so the early map of a primed buffer is the whole
   * wait, without the 10 ms `onSubmittedWorkDone` adds. A buffer not primed
   * yet takes the spec path once (and is primed by it).
   *
   * @returns Settles when the device is idle (already, for an early map).
   */
  async waitIdle(): Promise<void> {
    const probe = this.acquire(MIN_CLASS, true);
    try {
      const wait = probe.map(MIN_CLASS, true);
      this.primeWanted(); // the device is idle now: the primings' own polls cost nothing
      if (wait !== null) await wait;
      probe.unmap();
      this.release(probe);
      if (this.overdue()) await macrotask();
    } catch (e) {
      this.discard(probe);
      throw e;
    }
  }

  /**
   * Destroys a lent buffer that will not come back (a failed read's),
   * once its leftover map settles.
   *
   * @param b A buffer from `acquire`.
   */
  discard(b: ReadbackBuffer): void {
    this.#destroy(b);
  }

  /**
   * Takes an unmapped buffer back, or destroys it beyond what its class keeps.
   *
   * @param b A buffer from `acquire` (cooling or not).
   */
  release(b: ReadbackBuffer): void {
    let list = this.#free.get(b.size);
    if (list === undefined) this.#free.set(b.size, list = []);
    if (list.length >= keepOf(b.size)) this.#destroy(b);
    else list.push(b);
  }

  /** Destroys every idle buffer (a cooling one when its leftover map settles). */
  clear(): void {
    for (const list of this.#free.values()) for (const b of list) this.#destroy(b);
    this.#free.clear();
    this.#wanted.clear();
  }
}

/** Index of the last buffer of `list` that is not cooling (and primed, with `primed`), or -1. */
function findFree(list: readonly ReadbackBuffer[], primed: boolean): number {
  for (let i = list.length - 1; i >= 0; i--) {
    const b = list[i]!;
    if (!b.cooling && (!primed || b.primed)) return i;
  }
  return -1;
}

let turns: MessageChannel | null = null;
const turned: (() => void)[] = [];

/**
 * The channel `macrotask` posts to itself through: open only while a turn is
 * awaited (a listening port keeps the process alive), closed once none is.
 */
function channel(): MessageChannel {
  if (turns === null) {
    const c = turns = new MessageChannel();
    c.port1.onmessage = () => {
      turned.shift()?.();
      if (turned.length === 0) {
        c.port1.close();
        if (turns === c) turns = null;
      }
    };
  }
  return turns;
}

/**
 * Resolves after one turn of the event loop (settled leftover maps then run
 * their reactions): a message to itself, which takes tens of µs where
 * `setTimeout(0)` takes 1–4 ms (a fast read's whole round trip is ~0.1 ms).
 */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => {
    turned.push(resolve);
    channel().port2.postMessage(null);
  });
}

/** Idle buffers kept of a class. */
function keepOf(cls: number): number {
  if (cls >= 64 * MiB) return 1;
  return Math.max(4, Math.min(1024, Math.floor(KEEP_BYTES / cls)));
}
