/**
 * Shared memory that all-reduces among worker clients read their sources
 * into, reused from one all-reduce to the next, so that each does not fault
 * in fresh pages (a fresh 64 MiB buffer costs 16 K page faults).
 *
 * A buffer is held while anything may still touch it: the collective that
 * read into it, until its all-reduce succeeds, and each worker writing a
 * result from it, until that worker answers a fence queued after the write.
 * Once nothing holds it, it waits for the next read of the same size. Buffers
 * of a failed all-reduce are never reused (a worker may still be reducing in
 * them). At most 256 MiB wait at once, and they are let go when the last
 * worker device of this thread closes.
 *
 * @module
 */

/** Bytes of free shared memory kept for reuse, at most. */
const KEEP_MAX = 256 * 1024 * 1024;

/** The pool of this thread. */
export class SharedBuffers {
  #holds = new Map<SharedArrayBuffer, number>();
  #free = new Map<number, SharedArrayBuffer[]>();
  #freeBytes = 0;
  #keepMax: number;

  /**
   * Creates a pool.
   *
   * @param keepMax Bytes of free buffers kept for reuse, at most.
   */
  constructor(keepMax = KEEP_MAX) {
    this.#keepMax = keepMax;
  }

  /** Bytes of free buffers waiting for reuse. */
  get freeBytes(): number {
    return this.#freeBytes;
  }

  /**
   * A buffer of exactly `bytes` bytes, held once: a free one when there is one.
   *
   * @param bytes Its size.
   * @returns The buffer.
   */
  take(bytes: number): SharedArrayBuffer {
    const list = this.#free.get(bytes);
    const reused = list?.pop();
    let buffer: SharedArrayBuffer;
    if (reused !== undefined) {
      this.#freeBytes -= bytes;
      if (list!.length === 0) this.#free.delete(bytes);
      buffer = reused;
    } else {
      buffer = new SharedArrayBuffer(bytes);
    }
    this.#holds.set(buffer, 1);
    return buffer;
  }

  /**
   * Holds a buffer of the pool once more (other buffers are ignored).
   *
   * @param buffer The buffer.
   * @returns True when the pool holds it (a `release` is then owed).
   */
  hold(buffer: ArrayBufferLike): boolean {
    const n = this.#holds.get(buffer as SharedArrayBuffer);
    if (n === undefined) return false;
    this.#holds.set(buffer as SharedArrayBuffer, n + 1);
    return true;
  }

  /**
   * Lets go of one hold; the last one makes the buffer free for reuse.
   *
   * @param buffer The buffer (others are ignored).
   */
  release(buffer: ArrayBufferLike): void {
    const b = buffer as SharedArrayBuffer;
    const n = this.#holds.get(b);
    if (n === undefined) return;
    if (n > 1) return void this.#holds.set(b, n - 1);
    this.#holds.delete(b);
    if (this.#freeBytes + b.byteLength > this.#keepMax) return;
    const list = this.#free.get(b.byteLength);
    if (list === undefined) this.#free.set(b.byteLength, [b]);
    else list.push(b);
    this.#freeBytes += b.byteLength;
  }

  /**
   * Forgets a buffer: never reused, whoever still holds it (a failed all-reduce's).
   *
   * @param buffer The buffer (others are ignored).
   */
  forget(buffer: ArrayBufferLike): void {
    this.#holds.delete(buffer as SharedArrayBuffer);
  }

  /** Lets every free buffer go. */
  clear(): void {
    this.#free.clear();
    this.#freeBytes = 0;
  }
}

/** This thread's pool, shared by every worker device. */
export const sharedBuffers: SharedBuffers = new SharedBuffers();
