/**
 * `Handle`: a reference-counted reference to device memory (CubeCL's
 * `Handle`). JavaScript has no destructors, so handles are released
 * explicitly: `release()`, or `using` through `[Symbol.dispose]`. Memory is
 * reused once every clone is released and no queued work pins it.
 *
 * @module
 */

import type { StreamId } from "../ids.ts";
import type { ManagedMemory } from "./managed_memory.ts";
import type { BufferBinding, CopyDescriptor } from "./types.ts";
import { formatBytesExact } from "../_util/format.ts";

/**
 * A reference to `size` bytes of device memory owned by one stream, viewing
 * the range `[offsetStart, size - offsetEnd)`. A `Handle` is a
 * `BufferBinding`, so it can be passed wherever one is expected.
 *
 * @example Clone, release and `using`
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 *
 * await using client = await createClient();
 * {
 *   using h = client.empty(1024); // released at the end of the block
 *   const other = h.clone(); // a second reference to the same memory
 *   console.log(h.canMut()); // false: two user references exist
 *   other.release();
 *   console.log(h.canMut()); // true
 * }
 * ```
 */
export class Handle implements BufferBinding, Disposable {
  /** The memory descriptor shared by every clone. */
  readonly memory: ManagedMemory;
  /** The stream that owns the memory. */
  readonly stream: StreamId;
  /** Size of the reservation, in bytes. */
  readonly size: number;
  /** Bytes trimmed from the front. */
  readonly offsetStart: number;
  /** Bytes trimmed from the back. */
  readonly offsetEnd: number;
  #owner: object | null;

  /**
   * Internal: handles are made by a client (`create`, `empty`, `clone`).
   *
   * @param owner The server the memory belongs to.
   * @param memory The descriptor; this handle takes over one reference to it.
   * @param stream The owning stream.
   * @param size Reservation size in bytes.
   * @param offsetStart Bytes trimmed from the front.
   * @param offsetEnd Bytes trimmed from the back.
   */
  constructor(
    owner: object,
    memory: ManagedMemory,
    stream: StreamId,
    size: number,
    offsetStart = 0,
    offsetEnd = 0,
  ) {
    this.#owner = owner;
    this.memory = memory;
    this.stream = stream;
    this.size = size;
    this.offsetStart = offsetStart;
    this.offsetEnd = offsetEnd;
  }

  /** The server this handle belongs to, or `null` once released. */
  get owner(): object | null {
    return this.#owner;
  }

  /** True once `release()` was called on this handle object. */
  get released(): boolean {
    return this.#owner === null;
  }

  /** Bytes viewed: `size - offsetStart - offsetEnd`. */
  get sizeInUse(): number {
    return this.size - this.offsetStart - this.offsetEnd;
  }

  /**
   * True when this is the only user reference to the memory, so a kernel may
   * write into it in place.
   *
   * @returns Whether the memory may be mutated in place.
   */
  canMut(): boolean {
    return this.memory.canMut();
  }

  /**
   * Another reference to the same memory; release it separately.
   *
   * @returns The clone.
   * @throws {TypeError} When this handle was released.
   */
  clone(): Handle {
    const owner = this.#check("clone");
    this.memory.retain();
    return new Handle(owner, this.memory, this.stream, this.size, this.offsetStart, this.offsetEnd);
  }

  /**
   * A new reference viewing a narrower range: `start` more bytes trimmed from
   * the front and `end` more from the back (offsets add up, as in CubeCL).
   *
   * @param start Extra bytes to trim from the front (a multiple of 4).
   * @param end Extra bytes to trim from the back.
   * @returns The narrower handle; release it separately.
   * @throws {RangeError} When the offsets are not non-negative integers, the
   * front offset is not a multiple of 4, or the view would be negative.
   */
  view(start: number, end = 0): Handle {
    const owner = this.#check("view");
    for (const [name, v] of [["start", start], ["end", end]] as const) {
      if (!Number.isSafeInteger(v) || v < 0) {
        throw new RangeError(`Handle.view: ${name} must be a non-negative integer, got ${v}`);
      }
    }
    if ((this.offsetStart + start) % 4 !== 0) {
      throw new RangeError(`Handle.view: the front offset must stay a multiple of 4, got ${this.offsetStart + start}`);
    }
    if (start + end > this.sizeInUse) {
      throw new RangeError(
        `Handle.view: trimming ${start} + ${end} B exceeds the ${formatBytesExact(this.sizeInUse)} in view`,
      );
    }
    this.memory.retain();
    return new Handle(owner, this.memory, this.stream, this.size, this.offsetStart + start, this.offsetEnd + end);
  }

  /**
   * Describes this memory as a typed tensor for `readTensor`/`writeTensor`.
   *
   * @param shape Extent of each dimension, in elements.
   * @param strides Stride of each dimension, in elements.
   * @param elemSize Bytes per element.
   * @returns The copy descriptor (it does not hold a reference).
   */
  copyDescriptor(shape: readonly number[], strides: readonly number[], elemSize: number): CopyDescriptor {
    this.#check("copyDescriptor");
    return { binding: this, shape, strides, elemSize };
  }

  /** Drops this reference. Releasing twice is a no-op. */
  release(): void {
    if (this.#owner === null) return;
    this.#owner = null;
    this.memory.drop();
  }

  /** Same as `release()`, so `using h = client.empty(n)` works. */
  [Symbol.dispose](): void {
    this.release();
  }

  #check(what: string): object {
    if (this.#owner === null) {
      throw new TypeError(`Handle.${what}: memory ${this.memory.id} (${formatBytesExact(this.size)}) was released`);
    }
    return this.#owner;
  }
}
