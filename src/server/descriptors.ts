/**
 * Checks of copy descriptors (shape, strides, element size, range).
 *
 * @module
 */

import type { CopyDescriptor } from "./types.ts";

/**
 * Checks a copy descriptor and returns its byte length (`product(shape) ×
 * elemSize`), which must fit in the binding's bytes in view.
 *
 * @param d The descriptor.
 * @param where Call site, for messages.
 * @returns Bytes covered.
 * @throws {RangeError} For a malformed shape, strides or element size, or a range beyond the memory.
 */
export function checkDescriptor(d: CopyDescriptor, where: string): number {
  if (d === null || typeof d !== "object" || !Array.isArray(d.shape) || !Array.isArray(d.strides)) {
    throw new TypeError(`${where}: expected a CopyDescriptor { binding, shape, strides, elemSize }`);
  }
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
      `${where}: the descriptor covers ${bytes} B but memory ${b.memory.id} has ${inView} B in view`,
    );
  }
  return bytes;
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
