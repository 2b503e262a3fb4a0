/**
 * The client's data path: allocating, uploading, reading (as bytes or as a
 * typed array), and tensor groups, on one stream of a device link (the
 * server in process, or the connection to a Worker). The bodies of
 * `ComputeClient`'s data methods.
 *
 * @module
 */

import { Handle } from "../contract/handle.ts";
import { type ElementsOf, elementTypeOf, type TypedArray } from "../contract/typed_arrays.ts";
import { checkCountWords, checkHandle, checkSize } from "../contract/handle_checks.ts";
import { checkReads } from "../contract/transfer_checks.ts";
import type { MemoryLayoutDescriptor } from "../contract/memory_types.ts";
import type { CopyDescriptor } from "../contract/types.ts";
import type { StreamId } from "../ids.ts";
import type { DeviceLink } from "../contract/device_link.ts";
import { type HostData, type Tensor, toBytes, type TypedArrayType, type WaitOptions } from "./client_types.ts";
import { quiet, readFailed, waitFor, waitSignal } from "./_waits.ts";
import { allocTensors, checkTensorEntries, planTensors } from "./_tensors.ts";
import { describe } from "../_util/describe.ts";
import { formatBytesExact } from "../_util/format.ts";

/** One stream of a device: where a client's calls go. */
export interface Target {
  /** The device link. */
  readonly link: DeviceLink;
  /** The stream. */
  readonly stream: StreamId;
}

/** Allocates `size` bytes on the target's stream (see `ComputeClient.empty`). */
export function emptyOn(t: Target, size: number): Handle {
  t.link.checkAlive();
  checkSize(t.link, size, "empty");
  return t.link.allocate(size, t.stream, "storage");
}

/** Allocates an indirect count (see `ComputeClient.emptyCount`). */
export function emptyCountOn(t: Target): Handle {
  t.link.checkAlive();
  return t.link.allocate(12, t.stream, "count");
}

/** The 12 bytes of an indirect count `[x, y, z]`, each checked to be a u32 (for `createCount`). */
export function countBytes(x: number, y: number, z: number): Uint8Array<ArrayBuffer> {
  const counts = [x, y, z];
  counts.forEach((v, i) => {
    if (!Number.isInteger(v) || v < 0 || v > 0xffff_ffff) {
      throw new RangeError(`createCount: ${"xyz"[i]} must be an integer in [0, 2^32), got ${v}`);
    }
  });
  return new Uint8Array(new Uint32Array(counts).buffer);
}

/** Allocates an indirect count holding `[x, y, z]` (see `ComputeClient.createCount`). */
export function createCountOn(t: Target, x: number, y: number, z: number): Handle {
  const bytes = countBytes(x, y, z);
  checkCountWords(bytes, t.link.properties.hardware.maxCubeCount[0], "createCount");
  const h = emptyCountOn(t);
  writeBytes(t, h, bytes);
  return h;
}

/** Writes `bytes` into `h`, then takes a lent staging view's buffer back unless told not to. */
function writeBytes(t: Target, h: Handle, bytes: Uint8Array, recycle = true): void {
  t.link.writeBytes(h, bytes, t.stream, recycle);
}

/** Takes a lent staging view's buffer back (detaching it); other bytes are left alone. */
function recycleStaging(t: Target, bytes: Uint8Array): void {
  const staging = t.link.hostStaging;
  if (staging.owns(bytes)) staging.recycle(bytes);
}

/** Allocates memory holding a copy of `data`, of its element type (see `ComputeClient.create`). */
export function createOn<D extends HostData>(t: Target, data: D): Handle<ElementsOf<D>> {
  const bytes = toBytes(data, "create");
  const type = elementTypeOf(data); // before the write, which detaches a lent staging view
  const h = emptyOn(t, bytes.byteLength);
  writeBytes(t, h, bytes);
  return Handle.typed<ElementsOf<D>>(h, type);
}

/** Overwrites `handle` with exactly `sizeInUse` bytes (see `ComputeClient.write`). */
export function writeOn(t: Target, handle: Handle, data: HostData): void {
  t.link.checkAlive();
  const h = checkHandle(t.link.owner, handle, "write");
  const bytes = toBytes(data, "write");
  if (bytes.byteLength !== h.sizeInUse) {
    throw new RangeError(
      `write: ${formatBytesExact(bytes.byteLength)} given for memory ${h.memory.id} of ${
        formatBytesExact(h.sizeInUse)
      }`,
    );
  }
  if (h.memory.count && h.offsetStart === 0) {
    checkCountWords(bytes, t.link.properties.hardware.maxCubeCount[0], "write (an indirect count)");
  }
  writeBytes(t, h, bytes);
}

/**
 * Checks that `bytes` bytes read as a whole number of `type`'s elements, before
 * anything is read; returns the element size (1 for bytes). `own` says the
 * type is the handle's, not one the caller gave (the message then says how to
 * read the bytes anyway).
 */
export function elementSize(
  type: TypedArrayType<unknown> | undefined,
  bytes: number,
  where: string,
  own = false,
): number {
  if (type === undefined || (type as unknown) === Uint8Array) return 1;
  const size = typeof type === "function" ? type.BYTES_PER_ELEMENT : undefined;
  if (typeof size !== "number" || !Number.isInteger(size) || size < 1) {
    throw new TypeError(`${where}: type must be a typed array constructor such as Float32Array, got ${describe(type)}`);
  }
  if (bytes % size !== 0) {
    const hint = own ? ` (the handle's element type; read it as Uint8Array for its bytes)` : "";
    throw new RangeError(
      `${where}: ${formatBytesExact(bytes)} is not a whole number of ${type.name} elements (${size} B each)${hint}`,
    );
  }
  return size;
}

/** `bytes` as a `type` (a view over the same buffer; a copy only when misaligned). */
export function asTyped<T>(bytes: Uint8Array<ArrayBuffer>, type: TypedArrayType<T> | undefined, size: number): T {
  if (type === undefined || (type as unknown) === Uint8Array) return bytes as T;
  const b = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  return new type(b.buffer, b.byteOffset, b.byteLength / size);
}

/**
 * Reads handles with one device wait (see `ComputeClient.readMany`): each as
 * `type` when given, else as its own element type (`Handle.elementType`).
 *
 * @param t The client's server and stream.
 * @param handles The memory.
 * @param type The element type of every result, or undefined for each handle's own.
 * @param call The call errors name: `"read"` for a single `read`, else `readMany[i]`.
 * @param options The caller's signal, if any (see `_waits.ts`).
 * @returns The contents.
 */
export function readManyOn<T>(
  t: Target,
  handles: readonly Handle<TypedArray>[],
  type: TypedArrayType<T> | undefined,
  call: "read" | "readMany" = "readMany",
  options?: WaitOptions,
): Promise<T[]> {
  try {
    const signal = options === undefined ? undefined : waitSignal(options, call);
    if (!Array.isArray(handles)) throw new TypeError("readMany: handles must be an array of Handle");
    const types: (TypedArrayType<unknown> | undefined)[] = [];
    const sizes: number[] = [];
    const descriptors: CopyDescriptor[] = handles.map((h, i) => {
      const where = call === "read" ? "read" : `readMany[${i}]`;
      const handle = checkHandle(t.link.owner, h, where);
      const own = type === undefined;
      const ty: TypedArrayType<unknown> = own ? handle.elementType : type;
      sizes.push(elementSize(ty, handle.sizeInUse, where, own));
      types.push(ty);
      return { binding: handle, shape: [handle.sizeInUse], strides: [1], elemSize: 1 };
    });
    const typed = (out: Uint8Array<ArrayBuffer>[]) =>
      out.map((b, i) => asTyped(b, types[i] as TypedArrayType<T>, sizes[i]!));
    if (signal === undefined && quiet()) return t.link.read(descriptors, t.stream, true).then(typed, readFailed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return waitFor(t, t.link.read(descriptors, t.stream, true), "read", signal).then(typed);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Reads a tensor with contiguous strides (see `ComputeClient.readTensor`). */
export function readTensorOn<T>(
  t: Target,
  tensor: Tensor,
  type: TypedArrayType<T> | undefined,
  options?: WaitOptions,
): Promise<T> {
  try {
    const signal = options === undefined ? undefined : waitSignal(options, "readTensor");
    const h = checkHandle(t.link.owner, tensor?.handle, "readTensor");
    const descriptor = h.copyDescriptor(tensor.shape, tensor.strides, tensor.elemSize);
    // The door of reads, here once: the link trusts it.
    const size = elementSize(type, checkReads(t.link.owner, [descriptor], null, "readTensor")[0]!, "readTensor");
    const typed = (out: Uint8Array<ArrayBuffer>[]) => asTyped(out[0]!, type, size);
    if (signal === undefined && quiet()) return t.link.read([descriptor], t.stream, true).then(typed, readFailed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return waitFor(t, t.link.read([descriptor], t.stream, true), "read", signal).then(typed);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Allocates a group of tensors in one reservation (see `ComputeClient.emptyTensors`). */
export function emptyTensorsOn(t: Target, descriptors: readonly MemoryLayoutDescriptor[]): Tensor[] {
  t.link.checkAlive();
  if (!Array.isArray(descriptors)) throw new TypeError("emptyTensors: descriptors must be an array");
  return allocTensors((size) => emptyOn(t, size), descriptors, planTensors(t.link, descriptors, "emptyTensors"));
}

/** Allocates a group of tensors in one reservation and writes each one's data (see `ComputeClient.createTensors`). */
export function createTensorsOn(
  t: Target,
  entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[],
): Tensor[] {
  t.link.checkAlive();
  const { bytes, descriptors, plan } = checkTensorEntries(t.link, entries);
  const tensors = allocTensors((size) => emptyOn(t, size), descriptors, plan);
  // Every write first, then the staging views go back: entries may share one
  // view's buffer, and taking it back detaches every view over it.
  bytes.forEach((b, i) => writeBytes(t, tensors[i]!.handle, b, false));
  for (const b of bytes) recycleStaging(t, b);
  return tensors;
}
