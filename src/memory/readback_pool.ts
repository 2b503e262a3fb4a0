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
 * Idle buffers are kept per class up to 8 MiB of them (4 to 256 buffers; one
 * from 64 MiB): fast reads rotate through many small buffers while each cools.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";

const MiB = 1024 * 1024;
/** Smallest class, in bytes. */
const MIN_CLASS = 256;
/** Idle bytes kept per class. */
const KEEP_BYTES = 8 * MiB;

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
      return null;
    }
    const prime = () => {
      this.#primed = true;
    };
    if (this.#leftover === null) return this.buffer.mapAsync(GPUMapMode.READ, 0, bytes).then(prime);
    // Ordered after the leftover of an early map (the pool never lends a cooling buffer; this is a safety net).
    return this.#leftover.then(() => this.buffer.mapAsync(GPUMapMode.READ, 0, bytes)).then(prime);
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
  #created = 0;

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
   * can be mapped early is preferred (primed, not cooling); a cooling buffer
   * is never lent.
   *
   * @param size Bytes needed.
   * @param early Prefer a buffer that can be mapped early.
   * @returns The buffer.
   */
  acquire(size: number, early = false): ReadbackBuffer {
    const cls = this.classOf(size);
    const list = this.#free.get(cls);
    if (list !== undefined) {
      let pick = -1;
      for (let i = list.length - 1; i >= 0; i--) {
        const b = list[i]!;
        if (b.cooling) continue;
        if (pick < 0) pick = i;
        if (!early || b.primed) {
          pick = i;
          break;
        }
      }
      if (pick >= 0) return list.splice(pick, 1)[0]!;
    }
    this.#created++;
    return new ReadbackBuffer(this.#device, cls, `${this.#label} readback ${cls} B #${this.#created}`);
  }

  /**
   * Takes an unmapped buffer back, or destroys it beyond what its class keeps.
   *
   * @param b A buffer from `acquire` (cooling or not).
   */
  release(b: ReadbackBuffer): void {
    let list = this.#free.get(b.size);
    if (list === undefined) this.#free.set(b.size, list = []);
    if (list.length >= keepOf(b.size)) b.destroy();
    else list.push(b);
  }

  /** Destroys every idle buffer (a cooling one when its leftover map settles). */
  clear(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
  }
}

/** Idle buffers kept of a class. */
function keepOf(cls: number): number {
  if (cls >= 64 * MiB) return 1;
  return Math.max(4, Math.min(256, Math.floor(KEEP_BYTES / cls)));
}
