/**
 * The host's ways into a server's device memory: reads and writes of copy
 * descriptors (checked, resolved through the owning streams, then handed to
 * the calling stream), host staging memory lent for uploads, and the raw
 * buffer range of `getResource`.
 *
 * @module
 */

import { GraphStateError, IoError, type ServerError } from "../errors.ts";
import type { StreamId } from "../ids.ts";
import type { HostStagingPool } from "../memory/host_staging.ts";
import type { Slice } from "../contract/managed_memory.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import { checkBinding, isContiguous } from "../contract/descriptors.ts";
import { checkMemoryOf, checkReads, checkWrites } from "../contract/transfer_checks.ts";
import { checkStagingSizes } from "../contract/handle_checks.ts";
import type { StreamHost } from "./stream_slots.ts";
import type { BufferBinding, CopyDescriptor, ManagedResource } from "../contract/types.ts";
import type { OwnerResolver } from "../stream/_stream_parts.ts";

/** What `HostTransfers` is built with. */
export interface HostTransfersOptions {
  /** The server the transfers go through. */
  server: StreamHost;
  /** Its device context (guards the promises against device loss). */
  ctx: DeviceContext;
  /** Resolves a binding through the stream that owns it. */
  resolve: OwnerResolver;
  /** The host staging memory lent by `staging`. */
  hostStaging: HostStagingPool;
}

/** Reads, writes, host staging and raw ranges of one server's memory. */
export class HostTransfers {
  #server: StreamHost;
  #ctx: DeviceContext;
  #resolve: OwnerResolver;
  #hostStaging: HostStagingPool;

  /**
   * Creates the transfers of a server.
   *
   * @param options The server, its device context, its owner resolver and its host staging pool.
   */
  constructor(options: HostTransfersOptions) {
    this.#server = options.server;
    this.#ctx = options.ctx;
    this.#resolve = options.resolve;
    this.#hostStaging = options.hostStaging;
  }

  /**
   * Reads memory back to the host (see `ComputeServer.read`).
   *
   * @param descriptors What to read; contiguous strides only.
   * @param stream The calling stream.
   * @param into Memory to copy each descriptor's bytes into instead of
   * returning them (a worker's collective reading into shared memory); each
   * exactly as long as its descriptor.
   * @param checked True when the caller already checked every argument (the door is then skipped).
   * @returns The bytes of each descriptor (none with `into`). Rejects, never throws: with
   * `IoError` (`unsupported-strides`, `not-found`), `RangeError` or
   * `TypeError` for bad arguments (memory of another server among them),
   * `GraphStateError` while recording,
   * `DeviceLostError` once the device is gone, and `ServerUnhealthyError` when
   * the stream's error queue held errors.
   */
  read(
    descriptors: readonly CopyDescriptor[],
    stream: StreamId,
    into: readonly Uint8Array[] | null = null,
    checked = false,
  ): Promise<Uint8Array<ArrayBuffer>[]> {
    try {
      const server = this.#server;
      server.checkAlive();
      // Every argument is checked (once, at this door) before the stream is looked up (or built) and any memory
      // resolved; a caller that built the descriptors from handles it checked passes `checked`.
      const sizes = checked ? descriptors.map(bytesOf) : checkReads(server, descriptors, into);
      const s = server.stream(stream);
      s.refuseWhileRecording("read");
      const items = descriptors.map((d, i) => ({
        slice: this.#resolve(d.binding),
        offset: d.binding.offsetStart,
        size: sizes[i]!,
      }));
      return this.#ctx.guard(s.read(items, into));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Writes bytes into memory (see `ComputeServer.write`). Every argument is
   * checked before anything is written, so a refused call writes nothing.
   * Non-contiguous strides and stale bindings are queued on the memory's
   * stream as errors, and the descriptors after them are dropped (as in
   * CubeCL); writes inside a capture window are queued on the calling stream.
   *
   * @param writes Pairs of descriptor and bytes (exactly the descriptor's length).
   * @param stream The calling stream.
   * @param checked True when the caller already checked every argument (the door is then skipped).
   * @throws {DeviceLostError} Once the device is gone.
   * @throws {TypeError} When `writes` is not an array of pairs, or a binding
   * holds no `ManagedMemory` or memory of another server.
   * @throws {RangeError} For a malformed descriptor or binding (stream id,
   * size, offsets, a size beyond its memory), or bytes of the wrong length.
   */
  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId, checked = false): void {
    const server = this.#server;
    server.checkAlive();
    // Everything that can throw is checked before the first write: a refused call changes nothing.
    if (!checked) checkWrites(server, writes);
    const s = server.stream(stream); // built only for a call that passed its checks
    if (s.recorder !== null) {
      // The recording remembers every error queued on its stream: endCapture fails.
      s.errors.push(
        new GraphStateError("write", "a write inside a capture window is not recorded; the capture will fail"),
      );
      return;
    }
    for (const [d, bytes] of writes) {
      const owner = server.stream(d.binding.stream);
      if (!isContiguous(d.shape, d.strides)) {
        owner.errors.push(
          new IoError("unsupported-strides", `write: strides [${d.strides}] are not contiguous for shape [${d.shape}]`),
        );
        return;
      }
      let slice: Slice;
      try {
        slice = this.#resolve(d.binding);
      } catch (e) {
        owner.errors.push(e as ServerError);
        return;
      }
      // Bytes between the view's end and the next word may belong to other views of the reservation.
      const end = d.binding.offsetStart + bytes.byteLength;
      const exact = end % 4 !== 0 && end < d.binding.size;
      s.write(slice, d.binding.offsetStart, bytes, d.binding.stream, exact);
    }
  }

  /**
   * Lends reusable host staging memory (see `ComputeServer.staging`).
   *
   * @param sizes Bytes of each buffer.
   * @returns Host buffers to fill and pass to `write`.
   * @throws {DeviceLostError} Once the device is gone.
   * @throws {TypeError} When `sizes` is not an array.
   * @throws {RangeError} When a size is not a non-negative integer.
   * @throws {ResourceLimitError} When a size exceeds `maxBufferSize`.
   */
  staging(sizes: readonly number[]): Uint8Array[] {
    this.#server.checkAlive();
    return this.#hostStaging.lend(checkStagingSizes(sizes, this.#ctx.settings.maxBufferSize));
  }

  /**
   * The raw buffer range behind a binding, pinned until released (see
   * `ComputeServer.getResource`). Submits the calling stream and settles the
   * page first.
   *
   * @param binding The memory.
   * @param stream The calling stream.
   * @returns The range; call `release()` when done.
   * @throws {DeviceLostError} Once the device is gone.
   * @throws {TypeError} When `binding` holds no `ManagedMemory`, or memory of another server.
   * @throws {RangeError} For an invalid stream id, size or offsets, or a
   * binding that claims more bytes than its memory holds.
   * @throws {IoError} `not-found` for a stale binding.
   */
  getResource(binding: BufferBinding, stream: StreamId): ManagedResource {
    const server = this.#server;
    server.checkAlive();
    checkBinding(binding, "getResource");
    checkMemoryOf(this.#server, binding, "getResource");
    server.stream(stream).submit();
    const slice = this.#resolve(binding);
    server.stream(stream).settlePage(slice.page);
    const memory = binding.memory;
    memory.pin();
    let released = false;
    return {
      buffer: slice.page.storage.resource!,
      offset: slice.offset + binding.offsetStart,
      size: binding.size - binding.offsetStart - binding.offsetEnd,
      release() {
        if (released) return;
        released = true;
        memory.unpin();
      },
    };
  }
}

/** The bytes a checked descriptor covers. */
function bytesOf(d: CopyDescriptor): number {
  let n = d.elemSize;
  for (const v of d.shape) n *= v;
  return n;
}
