/**
 * Checks of copy descriptors (shape, strides, element size, range).
 *
 * @module
 */

import { checkStreamId } from "../ids.ts";
import { ManagedMemory } from "./managed_memory.ts";
import type { CopyDescriptor } from "./types.ts";
import { formatBytesExact } from "../_util/format.ts";

/**
 * Checks a copy descriptor and returns its byte length (`product(shape) ×
 * elemSize`), which must fit in the binding's bytes in view. Only the
 * descriptor is looked at: whether its memory is live is known when it is
 * resolved.
 *
 * @example Usage
 * ```ts ignore
 * const size = checkDescriptor(handle.copyDescriptor([2, 3], [3, 1], 4), "read[0]"); // 24
 * ```
 *
 * @param d The descriptor.
 * @param where Call site, for messages.
 * @returns Bytes covered.
 * @throws {TypeError} When `d` is not a descriptor or its binding holds no `ManagedMemory`.
 * @throws {RangeError} For a malformed shape, strides or element size, a
 * binding with an invalid stream id, size or offsets (the front offset must be
 * a multiple of 4), or a range beyond the memory.
 */
export function checkDescriptor(d: CopyDescriptor, where: string): number {
  if (d === null || typeof d !== "object" || !Array.isArray(d.shape) || !Array.isArray(d.strides)) {
    throw new TypeError(`${where}: expected a CopyDescriptor { binding, shape, strides, elemSize }`);
  }
  checkBinding(d.binding, where);
  if (d.shape.length !== d.strides.length) {
    throw new RangeError(`${where}: shape [${d.shape}] and strides [${d.strides}] differ in rank`);
  }
  let n = 1;
  for (const v of d.shape) {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new RangeError(`${where}: shape [${d.shape}] has an invalid extent ${v}`);
    }
    n *= v;
  }
  for (const v of d.strides) {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new RangeError(`${where}: strides [${d.strides}] has an invalid stride ${v}`);
    }
  }
  if (!Number.isSafeInteger(d.elemSize) || d.elemSize <= 0) {
    throw new RangeError(`${where}: elemSize must be a positive integer, got ${d.elemSize}`);
  }
  const b = d.binding;
  const inView = b.size - b.offsetStart - b.offsetEnd;
  const bytes = n * d.elemSize;
  if (bytes > inView) {
    throw new RangeError(
      `${where}: the descriptor covers ${formatBytesExact(bytes)} but memory ${b.memory.id} has ${
        formatBytesExact(inView)
      } in view`,
    );
  }
  return bytes;
}

/**
 * Throws when `b` is not a binding a copy can use: memory, a stream id, and
 * non-negative integer offsets inside its size.
 *
 * @param b The binding.
 * @param where Call site, for messages.
 * @throws {TypeError} When it holds no `ManagedMemory`.
 * @throws {RangeError} For an invalid stream id, size or offsets.
 */
export function checkBinding(b: CopyDescriptor["binding"], where: string): void {
  if (b === null || typeof b !== "object" || !(b.memory instanceof ManagedMemory)) {
    throw new TypeError(`${where}: the binding must be a BufferBinding whose memory is a ManagedMemory`);
  }
  checkStreamId(b.stream, where);
  for (const key of ["size", "offsetStart", "offsetEnd"] as const) {
    const v = b[key];
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new RangeError(`${where}: ${key} of memory ${b.memory.id} must be a non-negative integer, got ${v}`);
    }
  }
  if (b.offsetStart % 4 !== 0) {
    throw new RangeError(`${where}: offsetStart ${b.offsetStart} of memory ${b.memory.id} must be a multiple of 4`);
  }
  if (b.offsetStart + b.offsetEnd > b.size) {
    throw new RangeError(
      `${where}: offsets ${b.offsetStart} + ${b.offsetEnd} B exceed the ${
        formatBytesExact(b.size)
      } of memory ${b.memory.id}`,
    );
  }
}

/** True when the strides are contiguous row-major for the shape. */
export function isContiguous(shape: readonly number[], strides: readonly number[]): boolean {
  if (shape.length !== strides.length) return false;
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && strides[i] !== expected) return false;
    expected *= shape[i]!;
  }
  return true;
}

/** Checks a shape and element size, throwing a `RangeError` naming the bad value. */
export function checkShape(shape: readonly number[], elemSize: number, where: string): number {
  if (!Array.isArray(shape)) throw new TypeError(`${where}: shape must be an array of non-negative integers`);
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new RangeError(`${where}: shape [${shape}] has an invalid extent ${d}`);
    }
    n *= d;
  }
  if (!Number.isSafeInteger(elemSize) || elemSize <= 0) {
    throw new RangeError(`${where}: elemSize must be a positive integer, got ${elemSize}`);
  }
  const bytes = n * elemSize;
  if (!Number.isSafeInteger(bytes)) {
    throw new RangeError(
      `${where}: shape [${shape}] × ${formatBytesExact(elemSize)} is more bytes than Number.MAX_SAFE_INTEGER`,
    );
  }
  return bytes;
}
