/**
 * The all-reduce on the host: element-wise `sum`, `mean`, `max` or `min` of
 * the participants' bytes, in rank order, with the device's arithmetic:
 * `f32` and `f16` round after each addition (as a kernel adding in that type
 * would), `i32` and `u32` wrap, and `mean` divides the sum by the number of
 * participants (integer division truncates).
 *
 * @module
 */

import type { ElemType, ReduceOperation } from "../contract/types.ts";
import { DTYPE_SIZE } from "./collective_parts.ts";
import { formatBytesExact } from "../_util/format.ts";

type Typed = Float32Array<ArrayBuffer> | Int32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Float16Array<ArrayBuffer>;

/** A view of `bytes` as `dtype` (a copy only when the bytes are misaligned for it). */
function view(bytes: Uint8Array<ArrayBuffer>, dtype: ElemType): Typed {
  const size = DTYPE_SIZE[dtype];
  const b = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const n = b.byteLength / size;
  switch (dtype) {
    case "f32":
      return new Float32Array(b.buffer, b.byteOffset, n);
    case "i32":
      return new Int32Array(b.buffer, b.byteOffset, n);
    case "u32":
      return new Uint32Array(b.buffer, b.byteOffset, n);
    case "f16":
      return new Float16Array(b.buffer, b.byteOffset, n);
  }
}

// One loop per array type, so each stays monomorphic.
function addF32(acc: Float32Array, x: Float32Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! + x[i]!;
}
function addI32(acc: Int32Array, x: Int32Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! + x[i]!;
}
function addU32(acc: Uint32Array, x: Uint32Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! + x[i]!;
}
function addF16(acc: Float16Array, x: Float16Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! + x[i]!;
}
function maxOf(acc: Typed, x: Typed): void {
  for (let i = 0; i < acc.length; i++) if (x[i]! > acc[i]!) acc[i] = x[i]!;
}
function minOf(acc: Typed, x: Typed): void {
  for (let i = 0; i < acc.length; i++) if (x[i]! < acc[i]!) acc[i] = x[i]!;
}

function add(acc: Typed, x: Typed): void {
  if (acc instanceof Float32Array) addF32(acc, x as Float32Array);
  else if (acc instanceof Int32Array) addI32(acc, x as Int32Array);
  else if (acc instanceof Uint32Array) addU32(acc, x as Uint32Array);
  else addF16(acc, x as Float16Array);
}

function divide(acc: Typed, n: number): void {
  if (acc instanceof Int32Array) {
    for (let i = 0; i < acc.length; i++) acc[i] = Math.trunc(acc[i]! / n);
  } else if (acc instanceof Uint32Array) {
    for (let i = 0; i < acc.length; i++) acc[i] = Math.floor(acc[i]! / n);
  } else {
    for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! / n;
  }
}

/**
 * Reduces the participants' bytes element-wise, in rank order, into the
 * first one's buffer (which the caller gives up).
 *
 * @param inputs Every participant's bytes, equally long, in rank order.
 * @param dtype Element type.
 * @param op The reduction.
 * @returns The reduced bytes (the first input's buffer).
 * @throws {RangeError} When no input is given or their lengths differ.
 */
export function reduceOnHost(
  inputs: readonly Uint8Array<ArrayBuffer>[],
  dtype: ElemType,
  op: ReduceOperation,
): Uint8Array<ArrayBuffer> {
  const first = inputs[0];
  if (first === undefined) throw new RangeError("reduceOnHost: no input");
  for (const x of inputs) {
    if (x.byteLength !== first.byteLength) {
      throw new RangeError(
        `reduceOnHost: inputs of ${formatBytesExact(first.byteLength)} and ${formatBytesExact(x.byteLength)}`,
      );
    }
  }
  const acc = view(first, dtype);
  for (let k = 1; k < inputs.length; k++) {
    const x = view(inputs[k]!, dtype);
    if (op === "max") maxOf(acc, x);
    else if (op === "min") minOf(acc, x);
    else add(acc, x);
  }
  if (op === "mean" && inputs.length > 1) divide(acc, inputs.length);
  return new Uint8Array(acc.buffer, acc.byteOffset, acc.byteLength);
}
