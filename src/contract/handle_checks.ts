/**
 * Argument checks the client shares between its calls: a handle that is
 * live and belongs to this device, and a byte size the device can hold.
 *
 * @module
 */

import { ResourceLimitError } from "../errors.ts";
import { Handle } from "./handle.ts";
import type { DeviceProperties } from "./types.ts";
import type { MemoryLayoutDescriptor } from "./memory_types.ts";
import { checkShape } from "./descriptors.ts";
import { describe } from "../_util/describe.ts";
import { formatBytesExact } from "../_util/format.ts";

/**
 * Returns `h` as a live handle of `server`'s device.
 *
 * @param server The client's server.
 * @param h The value given.
 * @param where The call and argument, for the error.
 * @returns The handle.
 * @throws {TypeError} When `h` is not a `Handle`, was released, or belongs to another device.
 */
export function checkHandle(server: object, h: unknown, where: string): Handle {
  if (!(h instanceof Handle)) {
    throw new TypeError(`${where}: expected a Handle, got ${Object.prototype.toString.call(h)}`);
  }
  if (h.released) throw new TypeError(`${where}: memory ${h.memory.id} (${formatBytesExact(h.size)}) was released`);
  if (h.owner !== server) {
    throw new TypeError(`${where}: memory ${h.memory.id} belongs to another client's device`);
  }
  return h;
}

/**
 * Checks the words written into an indirect count against the dispatch
 * limit: WebGPU skips, without an error, an indirect dispatch whose count is
 * above `maxComputeWorkgroupsPerDimension`.
 *
 * @param bytes The bytes written (the count's 12 bytes: x, y, z).
 * @param max `maxComputeWorkgroupsPerDimension`.
 * @param where The call, for the error.
 * @throws {ResourceLimitError} `cube-count` when a word exceeds `max`.
 */
export function checkCountWords(bytes: Uint8Array, max: number, where: string): void {
  if (bytes.byteLength < 12) return;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 12);
  const counts = [view.getUint32(0, true), view.getUint32(4, true), view.getUint32(8, true)];
  if (counts.some((c) => c > max)) {
    throw new ResourceLimitError(
      "cube-count",
      where,
      counts,
      [max, max, max],
      "maxComputeWorkgroupsPerDimension",
      "WebGPU would skip the indirect dispatch without an error",
    );
  }
}

/**
 * Returns `size` as a byte count the device can allocate.
 *
 * @param server The client's server.
 * @param size The value given.
 * @param where The call, for the error.
 * @returns The size.
 * @throws {RangeError} When it is not a non-negative safe integer.
 * @throws {ResourceLimitError} When it exceeds `maxBufferSize`.
 */
export function checkSize(server: { readonly properties: DeviceProperties }, size: unknown, where: string): number {
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
    throw new RangeError(`${where}: size must be a non-negative integer number of bytes, got ${describe(size)}`);
  }
  const max = server.properties.memory.maxBufferSize;
  if (size > max) {
    throw new ResourceLimitError("buffer-size", where, [size], [max], "maxBufferSize");
  }
  return size;
}

/**
 * Checks the sizes `staging(sizes)` lends (both clients): an array of byte
 * counts, none above `maxBufferSize` (create and write move at most that many
 * bytes, so nothing larger could be written).
 *
 * @param sizes The value given.
 * @param maxBufferSize The device's `maxBufferSize`.
 * @returns The sizes.
 * @throws {TypeError} When `sizes` is not an array.
 * @throws {RangeError} For a size that is not a non-negative integer.
 * @throws {ResourceLimitError} For a size above `maxBufferSize`.
 */
export function checkStagingSizes(sizes: unknown, maxBufferSize: number): readonly number[] {
  if (!Array.isArray(sizes)) throw new TypeError("staging: sizes must be an array of byte counts");
  for (const size of sizes) {
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new RangeError(`staging: sizes must be non-negative integers, got ${size}`);
    }
    if (size > maxBufferSize) {
      throw new ResourceLimitError("buffer-size", "staging", [size], [maxBufferSize], "maxBufferSize");
    }
  }
  return sizes;
}

/**
 * Checks one tensor layout descriptor: an object with a valid shape and
 * element size whose byte count is a safe integer, and a known strategy.
 *
 * @param d The value given.
 * @param where The call and entry, for the error.
 * @throws {TypeError} When `d` is not a descriptor, or its strategy is unknown.
 * @throws {RangeError} For an invalid shape or element size, or a byte count above `Number.MAX_SAFE_INTEGER`.
 */
export function checkLayoutDescriptor(d: unknown, where: string): asserts d is MemoryLayoutDescriptor {
  if (d === null || typeof d !== "object") {
    throw new TypeError(`${where}: expected a layout descriptor { shape, elemSize, strategy? }, got ${describe(d)}`);
  }
  const { shape, elemSize, strategy } = d as MemoryLayoutDescriptor;
  checkShape(shape, elemSize, where);
  if (strategy !== undefined && strategy !== "contiguous" && strategy !== "optimized") {
    throw new TypeError(`${where}: strategy must be "contiguous" or "optimized", got ${describe(strategy)}`);
  }
}
