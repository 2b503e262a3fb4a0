/**
 * Writing a byte range whose end is not a multiple of 4 without touching the
 * bytes after it: `queue.writeBuffer` only moves whole 32-bit words, so the
 * last 1–3 bytes are merged into their word on the device by this one-thread
 * kernel (`word = (word & keep) | value`), ordered after the word-aligned part.
 *
 * @module
 */

import { defineKernel } from "../kernel/define_kernel.ts";
import type { Kernel } from "../contract/kernel.ts";

/** The patch kernel: info = [word index within the binding, keep mask, value]. */
export const BYTE_PATCH_KERNEL: Kernel = defineKernel({
  name: "denogpu byte patch",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> words: array<u32>;
@group(0) @binding(1) var<storage, read> info: array<u32>;
@compute @workgroup_size(1) fn main() {
  let i = info[0];
  words[i] = (words[i] & info[1]) | info[2];
}`,
});

/**
 * The keep mask and value that put the last `tail` bytes (1–3) of `data` into
 * the low bytes of a little-endian word and keep its other bytes.
 *
 * @param data The bytes being written.
 * @param tail How many trailing bytes do not fill a whole word.
 * @returns `[keep, value]`.
 */
export function tailWord(data: Uint8Array, tail: number): [number, number] {
  let value = 0;
  const from = data.byteLength - tail;
  for (let k = 0; k < tail; k++) value |= data[from + k]! << (8 * k);
  return [(0xffffffff << (8 * tail)) >>> 0, value >>> 0];
}
