/**
 * Where a stream's indirect launches read their workgroup counts. A count
 * normally stays where it is; when it lives in a buffer that the same launch
 * also binds as storage, WebGPU forbids the usage conflict, so the count is
 * copied into the stream's own indirect count buffer by a one-invocation
 * dispatch in the same compute pass, right before the launch's dispatch
 * (`CountCopier`): no pass break, no GPU object and no allocation per launch
 * once the count's buffer has its copy bind group. One 16-byte buffer serves
 * every copy: each is read by the dispatch that follows it, before the next
 * copy writes it. A launch none of whose bindings covers the count's bytes
 * cannot change them, so the launch right after it in the same pass, from the
 * same count, finds the count already copied and skips its copy (the
 * stream's command queue tracks it: `CommandQueue.holdsCount`).
 *
 * @module
 */

import type { Page, Slice } from "../contract/managed_memory.ts";
import { slotOf } from "../_util/slot.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { CopySource, CountCopyScratch } from "../kernel/count_copy.ts";
import type { BindingResolver } from "./binding_resolver.ts";
import type { DeviceContext } from "./device_context.ts";
import type { IndirectHost } from "./_stream_parts.ts";
import type { IndirectSource } from "../graph/graph.ts";

/** Indirect count sources of one stream. */
export class IndirectCounts {
  #stream: IndirectHost;
  #ctx: DeviceContext;
  #bindings: BindingResolver;
  /** The stream's indirect count buffer (STORAGE | INDIRECT), created at the first copy. */
  #buffer: GPUBuffer | null = null;
  /** The storage id and copy bind group of the last copy's source buffer. */
  #lastId = -1;
  #last: CopySource | null = null;
  /** The copy of `source`'s result, reused. */
  #copy: CountCopyScratch = { pipeline: null!, bindGroup: null!, offsets: new Uint32Array(1) };
  /** The result of `source`, reused (nothing is allocated per launch). */
  #scratch: { buffer: GPUBuffer; offset: number; page: Page; copy: CountCopyScratch | null; kept: boolean } = {
    buffer: null!,
    offset: 0,
    page: null!,
    copy: null,
    kept: false,
  };

  /**
   * Creates the instance.
   *
   * @param parts The stream, the device context and the stream's binding resolver.
   */
  constructor(parts: { stream: IndirectHost; ctx: DeviceContext; bindings: BindingResolver }) {
    this.#stream = parts.stream;
    this.#ctx = parts.ctx;
    this.#bindings = parts.bindings;
  }

  /**
   * The buffer and offset to dispatch indirectly from (after the storage
   * bindings were resolved). A count of this stream's memory that shares no
   * buffer with the launch's bindings (always so for counts from
   * `createCount`) is read in place. One that lives in a buffer the launch
   * also binds as storage is dispatched from the stream's indirect count
   * buffer, with the copy that fills it (`copy`, encoded right before the
   * dispatch), and whether the launch leaves the count's bytes unchanged
   * (`kept`: none of its bindings covers them; a next launch from the same
   * count then needs no copy). Returns null (after queuing an error) when the
   * binding is stale.
   *
   * The result is a scratch object, overwritten by the next call: a caller
   * that keeps it (held work) copies it and its copy.
   *
   * @param binding The count's binding.
   * @param bindings The launch's storage bindings.
   * @param n How many of them.
   * @param kernel Kernel name, for errors.
   * @param bound The slices of the launch's bindings, or null when they were
   * just resolved (the bind group cache's scratch arrays then name their buffers).
   * @returns The source, and the page holding the count.
   */
  source(
    binding: BufferBinding,
    bindings: readonly BufferBinding[],
    n: number,
    kernel: string,
    bound: readonly Slice[] | null,
  ): IndirectSource & { page: Page } | null {
    const stream = this.#stream;
    const desc = binding.memory;
    let slice = desc.slice;
    let conflict = false;
    let kept = true;
    if (
      slice !== null && slice.owner === desc && slice.page.storage.resource !== null &&
      slotOf(binding.stream, this.#ctx.settings.maxStreams) === stream.slot
    ) {
      // This stream's memory, resolved: no pin, and a conflict is a shared page;
      // a binding that covers any of the count's 12 bytes may change them.
      const page = slice.page;
      const at = slice.offset + binding.offsetStart;
      if (bound !== null) {
        for (let i = 0; i < n; i++) {
          const s = bound[i]!;
          if (s.page !== page) continue;
          conflict = true;
          const b = bindings[i]!;
          const start = s.offset + b.offsetStart;
          if (start < at + 12 && at < start + b.size - b.offsetStart - b.offsetEnd) kept = false;
        }
      } else {
        const cache = this.#ctx.bindGroups;
        const ids = cache.ids;
        const offsets = cache.offsets;
        const sizes = cache.sizes;
        const id = page.storage.id;
        for (let i = 0; i < n; i++) {
          if (ids[i] !== id) continue;
          conflict = true;
          if (offsets[i]! < at + 12 && at < offsets[i]! + sizes[i]!) kept = false;
        }
      }
    } else {
      kept = false; // another stream's memory, or a stale descriptor: copied every time
      if (bound !== null) {
        // The slow path compares the bind group cache's scratch ids: fill them for this launch.
        const ids = this.#ctx.bindGroups.ids;
        for (let i = 0; i < n; i++) ids[i] = bound[i]!.page.storage.id;
      }
      const r = this.#bindings.resolveIndirect(binding, n, kernel);
      if (r === null) return null;
      slice = r.slice;
      conflict = r.conflict;
    }
    const page = slice.page;
    if (page.useStream !== stream || page.useEpoch !== stream.epoch) stream.usePage(page);
    const out = this.#scratch;
    out.page = page;
    const storage = page.storage;
    if (!conflict) {
      out.buffer = storage.resource!;
      out.offset = slice.offset + binding.offsetStart;
      out.copy = null;
      out.kept = false;
      return out;
    }
    let buffer = this.#buffer;
    if (buffer === null) {
      buffer = this.#buffer = this.#ctx.device.createBuffer({
        label: `${stream.label} indirect count`,
        size: 16,
        usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.STORAGE,
      });
    }
    const copier = this.#ctx.countCopier;
    let from = this.#last;
    if (storage.id !== this.#lastId || from === null) {
      from = this.#last = copier.source(storage.id, storage.resource!, buffer, stream.slot);
      this.#lastId = storage.id;
    }
    const copy = this.#copy;
    copy.bindGroup = from.bindGroup;
    copier.place(copy, from, slice.offset + binding.offsetStart);
    out.buffer = buffer;
    out.offset = 0;
    out.copy = copy;
    out.kept = kept;
    return out;
  }

  /** Destroys the indirect count buffer, if any (teardown). */
  destroy(): void {
    this.#buffer?.destroy();
  }
}
