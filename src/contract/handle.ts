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
import type { TypedArray, TypedArrayType } from "./typed_arrays.ts";
import type { BufferBinding, CopyDescriptor } from "./types.ts";
import { formatBytesExact } from "../_util/format.ts";

/**
 * A reference to `size` bytes of device memory owned by one stream, viewing
 * the range `[offsetStart, size - offsetEnd)`. A `Handle` is a
 * `BufferBinding`, so it can be passed wherever one is expected.
 *
 * A handle remembers the element type of the data it was made from:
 * `client.create(new Float32Array(n))` gives a `Handle<Float32Array>`, which
 * `read(h)` returns as a `Float32Array`; `empty(n)`, and `create` of a
 * `Uint8Array`, `DataView` or `ArrayBuffer`, give bytes (`Handle`, that is
 * `Handle<Uint8Array>`). `clone()` and `view()` keep the type. Every handle
 * is also a `Handle` of bytes in TypeScript, so calls taking a `Handle` take
 * any; a bytes handle is not a `Handle<Float32Array>`, nor a
 * `Handle<Float32Array>` a `Handle<Uint32Array>`.
 *
 * @typeParam T The typed array of its elements, over an `ArrayBuffer` as a read returns it.
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
 *
 * @example A handle keeps its element type
 * ```ts
 * import { createClient, type Handle } from "@denogpu/runtime";
 *
 * await using client = await createClient();
 * using h: Handle<Float32Array> = client.create(new Float32Array([1, 2, 3, 4]));
 * console.log(h.elementType.name); // "Float32Array"
 * using tail = h.view(8); // a Handle<Float32Array> of the last two elements
 * console.log(await client.read(tail)); // Float32Array(2) [3, 4]
 * console.log((await client.read(h, Uint8Array)).length); // 16: an explicit type wins
 * ```
 */
export class Handle<T extends TypedArray = Uint8Array<ArrayBuffer>> implements BufferBinding, Disposable {
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
  // Not typed with T: a handle of any element type is a handle of bytes (see `elementType`).
  #type: TypedArrayType<TypedArray>;

  /**
   * Internal: handles are made by a client (`create`, `empty`, `clone`).
   *
   * @param owner The server the memory belongs to.
   * @param memory The descriptor; this handle takes over one reference to it.
   * @param stream The owning stream.
   * @param size Reservation size in bytes.
   * @param offsetStart Bytes trimmed from the front.
   * @param offsetEnd Bytes trimmed from the back.
   * @param elementType The constructor of its elements (`Uint8Array`: bytes).
   */
  constructor(
    owner: object,
    memory: ManagedMemory,
    stream: StreamId,
    size: number,
    offsetStart = 0,
    offsetEnd = 0,
    elementType: TypedArrayType<TypedArray> = Uint8Array,
  ) {
    this.#owner = owner;
    this.#type = elementType;
    this.memory = memory;
    this.stream = stream;
    this.size = size;
    this.offsetStart = offsetStart;
    this.offsetEnd = offsetEnd;
  }

  /**
   * The constructor of its elements, which `read(h)` returns them as:
   * `Float32Array` for a handle made from one, `Uint8Array` for bytes. For a
   * handle typed as bytes (`Handle`) TypeScript says any typed array's, since
   * every typed handle is also a `Handle`.
   */
  get elementType():
    & ([T] extends [Uint8Array] ? TypedArrayType<TypedArray> : TypedArrayType<T>)
    & {
      // Empty: it only makes TypeScript relate handles by their members, not by their type argument
      // alone (by which a Handle<Float32Array> would not be a Handle): so a Handle<Float32Array> is a
      // Handle, whose `elementType` is any typed array's, but not a Handle<Uint32Array>.
      [K in keyof T as never]-?: never;
    } {
    return this.#type as never;
  }

  /**
   * Internal: gives a handle just made the element type of the data written
   * into it (what `create` returns).
   *
   * @ignore
   * @param handle The handle, still of bytes.
   * @param type The constructor of its elements.
   * @returns The same handle, typed.
   */
  static typed<U extends TypedArray>(handle: Handle<TypedArray>, type: TypedArrayType<TypedArray>): Handle<U> {
    handle.#type = type;
    return handle as unknown as Handle<U>;
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
   * Another reference to the same memory, of the same element type; release it separately.
   *
   * @returns The clone.
   * @throws {TypeError} When this handle was released.
   */
  clone(): Handle<T> {
    const owner = this.#check("clone");
    this.memory.retain();
    return new Handle<T>(owner, this.memory, this.stream, this.size, this.offsetStart, this.offsetEnd, this.#type);
  }

  /**
   * A new reference viewing a narrower range: `start` more bytes trimmed from
   * the front and `end` more from the back (offsets add up, as in CubeCL),
   * of the same element type. Offsets are bytes, any number of them: a view
   * that is not a whole number of its elements is read as bytes or with an
   * explicit type; `read(view)` with its own type refuses it (`RangeError`,
   * before anything is read).
   *
   * @param start Extra bytes to trim from the front (a multiple of 4).
   * @param end Extra bytes to trim from the back.
   * @returns The narrower handle; release it separately.
   * @throws {RangeError} When the offsets are not non-negative integers, the
   * front offset is not a multiple of 4, or the view would be negative.
   */
  view(start: number, end = 0): Handle<T> {
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
    const { memory, stream, size } = this;
    return new Handle<T>(owner, memory, stream, size, this.offsetStart + start, this.offsetEnd + end, this.#type);
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
