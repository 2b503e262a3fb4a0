/**
 * Resolving a launch's bindings on one stream: each binding's slice (through
 * its owner stream when the descriptor is stale), its page marked used by the
 * batch being encoded, cross-stream memory pinned, and the buffer, offset and
 * size written into the bind group cache's scratch arrays. An indirect count
 * is resolved the same way, and checked against the storage bindings (WebGPU
 * forbids a buffer bound as storage from also being the indirect source).
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { slotOf } from "../_util/slot.ts";
import { IoError, LaunchError, type ServerError } from "../errors.ts";
import type { ManagedMemory, Slice } from "../contract/managed_memory.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { DeviceContext } from "./device_context.ts";
import type { ErrorQueue } from "./error_queue.ts";
import type { ResolverHost } from "./_stream_parts.ts";

/** Binding resolution for one stream. */
export class BindingResolver {
  #stream: ResolverHost;
  #ctx: DeviceContext;
  #errors: ErrorQueue;
  #pins: ManagedMemory[];

  /**
   * Creates the resolver.
   *
   * @param parts The stream, the device context, the stream's error queue,
   * and its pins waiting for the next submission (the default for `pins`).
   */
  constructor(parts: { stream: ResolverHost; ctx: DeviceContext; errors: ErrorQueue; pins: ManagedMemory[] }) {
    this.#stream = parts.stream;
    this.#ctx = parts.ctx;
    this.#errors = parts.errors;
    this.#pins = parts.pins;
  }

  /**
   * Resolves bindings into the bind group cache's scratch arrays and marks
   * their pages used. Returns -1 (after queuing a `LaunchError` `io`) when a
   * binding is stale, else the number of bindings owned by another stream,
   * pinned into `pins` (by default, until the next submission completes).
   *
   * @param bindings The bindings.
   * @param n How many of them.
   * @param kernel Kernel name, for errors.
   * @param pins Where cross-stream pins go.
   * @returns -1, or the number of cross-stream bindings.
   */
  resolve(
    bindings: readonly BufferBinding[],
    n: number,
    kernel: string,
    pins: ManagedMemory[] = this.#pins,
  ): number {
    const stream = this.#stream;
    let cross = 0;
    const cache = this.#ctx.bindGroups;
    const ids = cache.ids;
    const offsets = cache.offsets;
    const sizes = cache.sizes;
    const buffers = cache.buffers;
    const maxStreams = this.#ctx.settings.maxStreams;
    for (let i = 0; i < n; i++) {
      const b = bindings[i]!;
      const desc = b.memory;
      let slice = desc.slice;
      if (slice === null || slice.owner !== desc || slice.page.storage.resource === null) {
        try {
          slice = stream.resolveOwner(b);
        } catch (e) {
          this.#errors.push(
            e instanceof IoError
              ? new LaunchError("io", kernel, `${kernel}: binding ${i}: ${e.message}`, { cause: e })
              : e as ServerError,
          );
          return -1;
        }
      }
      const page = slice.page;
      if (page.useStream !== stream || page.useEpoch !== stream.epoch) stream.usePage(page);
      if (slotOf(b.stream, maxStreams) !== stream.slot) {
        desc.pin();
        pins.push(desc);
        cross++;
      }
      const size = b.size - b.offsetStart - b.offsetEnd;
      if (size === 0) {
        // WebGPU cannot bind 0 bytes: bind a scratch buffer, so the kernel touches no one's memory.
        const scratch = this.#ctx.emptyBinding;
        ids[i] = scratch.id;
        offsets[i] = 0;
        sizes[i] = scratch.size;
        buffers[i] = scratch.buffer;
        continue;
      }
      const offset = slice.offset + b.offsetStart;
      if (offset % this.#ctx.settings.storageOffsetAlignment !== 0) {
        this.#errors.push(
          new LaunchError(
            "io",
            kernel,
            `${kernel}: binding ${i} starts at byte ${offset} of its buffer, not a multiple of minStorageBufferOffsetAlignment (${this.#ctx.settings.storageOffsetAlignment})`,
          ),
        );
        return -1;
      }
      ids[i] = page.storage.id;
      offsets[i] = offset;
      sizes[i] = alignUp(size, 4);
      buffers[i] = page.storage.resource!;
    }
    return cross;
  }

  /**
   * Resolves the binding of an indirect count (after `resolve` filled the
   * scratch arrays for bindings `[0, n)`), pinning it into `pins` when
   * another stream owns it. Returns null (after queuing a `LaunchError` `io`)
   * when the binding is stale.
   *
   * @param binding The count's binding.
   * @param n Storage bindings of the launch.
   * @param kernel Kernel name, for errors.
   * @param pins Where a cross-stream pin goes.
   * @returns The slice, and whether its buffer is also bound as storage by
   * this launch (WebGPU forbids that usage conflict: the count must be copied).
   */
  resolveIndirect(
    binding: BufferBinding,
    n: number,
    kernel: string,
    pins: ManagedMemory[] = this.#pins,
  ): { slice: Slice; conflict: boolean } | null {
    let slice: Slice;
    try {
      slice = this.#stream.resolveOwner(binding);
    } catch (e) {
      this.#errors.push(
        new LaunchError("io", kernel, `${kernel}: indirect count: ${(e as Error).message}`, { cause: e }),
      );
      return null;
    }
    const maxStreams = this.#ctx.settings.maxStreams;
    if (slotOf(binding.stream, maxStreams) !== this.#stream.slot) {
      binding.memory.pin(); // another stream's memory: kept until the work that reads it is done
      pins.push(binding.memory);
    }
    const ids = this.#ctx.bindGroups.ids;
    const id = slice.page.storage.id;
    let conflict = false;
    for (let i = 0; i < n; i++) if (ids[i] === id) conflict = true;
    return { slice, conflict };
  }
}
