/**
 * The door of reads and writes, as `launch_checks.ts` is the door of
 * launches: every argument of a transfer is checked here once, where the call
 * enters a device link. A caller that built its descriptors from handles it
 * already checked (the client, or a Worker's host running what the main
 * thread checked) passes its `checked` flag and the link trusts it.
 *
 * @module
 */

import { IoError } from "../errors.ts";
import { checkDescriptor, isContiguous } from "./descriptors.ts";
import type { BufferBinding, CopyDescriptor } from "./types.ts";
import { formatBytesExact } from "../_util/format.ts";

/**
 * Throws when `binding`'s memory was bound by another server (its buffer
 * lives on another device, or in another server's pools, and WebGPU would
 * refuse the copy only later, failing the work submitted with it), or when
 * the binding claims more bytes than its memory holds.
 *
 * @param owner The server the call went to.
 * @param binding The binding.
 * @param where The call and argument, for the error.
 * @throws {TypeError} For memory of another server.
 * @throws {RangeError} For a binding larger than its memory.
 */
export function checkMemoryOf(owner: object, binding: BufferBinding, where: string): void {
  const memory = binding.memory;
  const bound = memory.server;
  if (bound !== null && bound !== owner) {
    throw new TypeError(
      `${where}: memory ${memory.id} belongs to another server; use it through the client or server that created it`,
    );
  }
  const slice = memory.slice;
  if (slice !== null && slice.owner === memory && binding.size > slice.size) {
    throw new RangeError(
      `${where}: the binding claims ${formatBytesExact(binding.size)} but memory ${memory.id} holds ${
        formatBytesExact(slice.size)
      }`,
    );
  }
}

/**
 * Checks a read's arguments and returns the bytes of each descriptor.
 *
 * @param owner The server the read went to.
 * @param descriptors What to read.
 * @param into Memory each descriptor is read into, or null.
 * @param call The call errors name: `read` (each descriptor as `read[i]`) or a call of one descriptor.
 * @returns The byte length of each descriptor.
 * @throws {TypeError} When `descriptors` is not an array, or for a malformed descriptor or memory of another server.
 * @throws {RangeError} For a malformed shape, strides, element size or binding, or an `into` of the wrong length.
 * @throws {IoError} `unsupported-strides` for strides that are not contiguous.
 */
export function checkReads(
  owner: object,
  descriptors: readonly CopyDescriptor[],
  into: readonly Uint8Array[] | null,
  call = "read",
): number[] {
  if (!Array.isArray(descriptors)) throw new TypeError(`${call}: descriptors must be an array of CopyDescriptor`);
  return descriptors.map((d, i) => {
    const where = call === "read" ? `read[${i}]` : call;
    const size = checkDescriptor(d, where);
    checkMemoryOf(owner, d.binding, where);
    if (!isContiguous(d.shape, d.strides)) {
      throw new IoError(
        "unsupported-strides",
        `${call}: strides [${d.strides}] are not contiguous for shape [${d.shape}]`,
      );
    }
    if (into !== null && into[i]?.byteLength !== size) {
      throw new RangeError(`${where}: ${formatBytesExact(size)} to read into ${givenBytes(into[i])}`);
    }
    return size;
  });
}

/**
 * Checks a write's arguments, all before anything is written, so a refused
 * call writes nothing. Strides that are not contiguous are not refused here:
 * they fail on the memory's stream, as in CubeCL.
 *
 * @param owner The server the write went to.
 * @param writes Pairs of descriptor and bytes.
 * @throws {TypeError} When `writes` is not an array of pairs, or for a malformed descriptor or memory of another server.
 * @throws {RangeError} For a malformed descriptor or binding, or bytes of the wrong length.
 */
export function checkWrites(owner: object, writes: readonly (readonly [CopyDescriptor, Uint8Array])[]): void {
  if (!Array.isArray(writes)) throw new TypeError("write: writes must be an array of [CopyDescriptor, Uint8Array]");
  writes.forEach((entry, i) => {
    if (!Array.isArray(entry)) throw new TypeError(`write[${i}]: expected a [CopyDescriptor, Uint8Array] pair`);
    const [d, bytes] = entry;
    const size = checkDescriptor(d, `write[${i}]`);
    checkMemoryOf(owner, d.binding, `write[${i}]`);
    if (!(bytes instanceof Uint8Array) || bytes.byteLength !== size) {
      throw new RangeError(`write[${i}]: ${givenBytes(bytes)} given for a descriptor of ${formatBytesExact(size)}`);
    }
  });
}

/** The size of a buffer a caller gave, or "no bytes" for anything else. */
function givenBytes(x: unknown): string {
  return ArrayBuffer.isView(x) ? formatBytesExact(x.byteLength) : "no bytes";
}
