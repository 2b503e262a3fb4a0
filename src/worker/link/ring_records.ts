/**
 * Writing records into a worker client's command ring (the main thread's
 * side of `ring_layout.ts`). `writeLaunch` is the hot path: a few
 * typed-array stores per binding and info word, no allocation.
 *
 * @module
 */

import type { BufferBinding, InfoWords, LaunchMode } from "../../contract/types.ts";
import type { RingWriter } from "../wire/command_ring.ts";
import type { RemoteMemory } from "./remote_memory.ts";
import {
  HAS_VIEWS,
  header,
  hi,
  INFO_F32,
  INFO_I32,
  INFO_PAYLOAD,
  INFO_U32,
  LAUNCH_FIXED,
  LAUNCH_INDIRECT,
  LAUNCH_SKIP,
  lo,
  Op,
  type OpCode,
  RECORD_MAX_SLOTS,
  slotsFor,
  WRITE_FIXED,
  WRITE_INLINE,
} from "../wire/ring_layout.ts";

/** True when a binding views part of its memory (offsets travel with it). */
function isView(b: BufferBinding): boolean {
  return b.offsetStart !== 0 || b.offsetEnd !== 0;
}

/** Writes a binding's offsets as four words at `p`. */
function putOffsets(u: Uint32Array, p: number, b: BufferBinding): void {
  u[p] = lo(b.offsetStart);
  u[p + 1] = hi(b.offsetStart);
  u[p + 2] = lo(b.offsetEnd);
  u[p + 3] = hi(b.offsetEnd);
}

/**
 * Writes a launch record.
 *
 * @param ring The ring.
 * @param kernel The kernel's index on this connection.
 * @param buffers The bindings (their memory ids are the handle ids).
 * @param info Info words, or null.
 * @param infoPayload The payload id of the info words, or -1 to inline them.
 * @param x Workgroups along x.
 * @param y Workgroups along y.
 * @param z Workgroups along z.
 * @param indirect The indirect count, or null.
 * @param mode The mode.
 * @param stream The stream.
 * @returns False, writing nothing, when the info words do not fit inline
 * (the record would pass `RECORD_MAX_SLOTS`): send them by payload.
 * @throws {RangeError} When the bindings alone need more than 255 slots.
 */
export function writeLaunch(
  ring: RingWriter,
  kernel: number,
  buffers: readonly BufferBinding[],
  info: InfoWords | null,
  infoPayload: number,
  x: number,
  y: number,
  z: number,
  indirect: BufferBinding | null,
  mode: LaunchMode,
  stream: number,
): boolean {
  const n = buffers.length;
  const nb = n + (indirect === null ? 0 : 1);
  let views = indirect !== null && isView(indirect);
  for (let i = 0; !views && i < n; i++) views = isView(buffers[i]!);
  const infoLen = info === null ? 0 : info.length;
  const inlineInfo = infoPayload < 0 ? infoLen : 0;
  const slots = slotsFor(LAUNCH_FIXED + nb * (views ? 5 : 1) + inlineInfo);
  if (slots > RECORD_MAX_SLOTS && inlineInfo > 0) return false;
  if (slots > 255 || slots > ring.capacity / 2) {
    throw new RangeError(`launch: ${n} bindings do not fit a record of the worker's command ring`);
  }
  let flags = mode === "skip" ? LAUNCH_SKIP : 0;
  if (indirect !== null) flags |= LAUNCH_INDIRECT;
  if (views) flags |= HAS_VIEWS;
  if (infoPayload >= 0) flags |= INFO_PAYLOAD;
  const kind = info === null
    ? 0
    : info instanceof Float32Array
    ? INFO_F32
    : info instanceof Int32Array
    ? INFO_I32
    : INFO_U32;
  const at = ring.reserve(slots);
  const u = ring.u32;
  u[at] = header(Op.launch, slots, flags | (kind << 20));
  u[at + 1] = lo(stream);
  u[at + 2] = hi(stream);
  u[at + 3] = kernel;
  u[at + 4] = x;
  u[at + 5] = y;
  u[at + 6] = z;
  u[at + 7] = n;
  u[at + 8] = infoPayload >= 0 ? infoPayload : infoLen;
  let p = at + LAUNCH_FIXED;
  for (let i = 0; i < n; i++) u[p + i] = (buffers[i]!.memory as RemoteMemory).slot;
  if (indirect !== null) u[p + n] = (indirect.memory as RemoteMemory).slot;
  p += nb;
  if (views) {
    for (let i = 0; i < n; i++, p += 4) putOffsets(u, p, buffers[i]!);
    if (indirect !== null) {
      putOffsets(u, p, indirect);
      p += 4;
    }
  }
  if (inlineInfo > 0) {
    if (kind === INFO_U32) {
      const words = info as Uint32Array;
      for (let i = 0; i < inlineInfo; i++) u[p + i] = words[i]!;
    } else if (kind === INFO_F32) {
      ring.f32.set(info as Float32Array, p); // a typed copy keeps every bit (NaN payloads)
    } else {
      ring.i32.set(info as Int32Array, p);
    }
  }
  ring.commit();
  return true;
}

/**
 * Writes a record of a stream id and up to four more words (allocations,
 * graph and mode commands).
 *
 * @param ring The ring.
 * @param op The operation.
 * @param stream The stream.
 * @param a Word 3.
 * @param b Word 4.
 * @param c Word 5.
 * @param d Word 6.
 */
export function writeStreamRecord(ring: RingWriter, op: OpCode, stream: number, a = 0, b = 0, c = 0, d = 0): void {
  const at = ring.reserve(1);
  const u = ring.u32;
  u[at] = header(op, 1);
  u[at + 1] = lo(stream);
  u[at + 2] = hi(stream);
  u[at + 3] = a;
  u[at + 4] = b;
  u[at + 5] = c;
  u[at + 6] = d;
  ring.commit();
}

/**
 * Writes a one-slot record of up to two words after its header.
 *
 * @param ring The ring.
 * @param op The operation.
 * @param a Word 1.
 * @param b Word 2.
 */
export function writeShortRecord(ring: RingWriter, op: OpCode, a = 0, b = 0): void {
  const at = ring.reserve(1);
  ring.u32[at] = header(op, 1);
  ring.u32[at + 1] = a;
  ring.u32[at + 2] = b;
  ring.commit();
}

/**
 * Writes a write record: its bytes inline (`bytes`), or named by payload id.
 *
 * @param ring The ring.
 * @param binding The destination.
 * @param stream The calling stream.
 * @param bytes The bytes to inline, or null.
 * @param payload The payload id when `bytes` is null.
 */
export function writeWrite(
  ring: RingWriter,
  binding: BufferBinding,
  stream: number,
  bytes: Uint8Array | null,
  payload: number,
): void {
  const inline = bytes === null ? 0 : bytes.byteLength;
  const slots = slotsFor(WRITE_FIXED + Math.ceil(inline / 4));
  const views = isView(binding);
  const at = ring.reserve(slots);
  const u = ring.u32;
  u[at] = header(Op.write, slots, (bytes === null ? 0 : WRITE_INLINE) | (views ? HAS_VIEWS : 0));
  u[at + 1] = lo(stream);
  u[at + 2] = hi(stream);
  u[at + 3] = (binding.memory as RemoteMemory).slot;
  putOffsets(u, at + 4, binding);
  u[at + 8] = bytes === null ? payload : inline;
  if (bytes !== null) {
    new Uint8Array(u.buffer, u.byteOffset + (at + WRITE_FIXED) * 4, inline).set(bytes);
  }
  ring.commit();
}
