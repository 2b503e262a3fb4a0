/**
 * Where a stream's indirect launches read their workgroup counts. A count
 * normally stays where it is; when it lives in a buffer that the same launch
 * also binds as storage, WebGPU forbids the usage conflict, so the count is
 * first copied into a small stream-owned indirect buffer (created on first
 * use, refilled from its start after each submit).
 *
 * @module
 */

import type { Page, Slice } from "../contract/managed_memory.ts";
import { slotOf } from "../_util/slot.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { BindingResolver } from "./binding_resolver.ts";
import type { DeviceContext } from "./device_context.ts";
import type { IndirectHost } from "./_stream_parts.ts";
import type { IndirectSource } from "../graph/graph.ts";

/** Bytes of the stream-owned indirect buffer (16 per copied count). */
const INDIRECT_BYTES = 4096;

/** Indirect count sources of one stream. */
export class IndirectCounts {
  #stream: IndirectHost;
  #ctx: DeviceContext;
  #bindings: BindingResolver;
  #buffer: GPUBuffer | null = null;
  #used = 0;
  /** The result of `source`, reused (nothing is allocated per launch). */
  #scratch: { buffer: GPUBuffer; offset: number; page: Page } = { buffer: null!, offset: 0, page: null! };

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

  /** True when the indirect buffer has no room for another copied count (submit first). */
  get full(): boolean {
    return this.#used + 16 > INDIRECT_BYTES;
  }

  /**
   * The buffer and offset to dispatch indirectly from (after the storage
   * bindings were resolved). A count of this stream's memory that shares no
   * buffer with the launch's bindings (always so for counts from
   * `createCount`) is read in place. One that lives in a buffer the launch
   * also binds as writable storage is copied to the stream-owned indirect
   * buffer first (WebGPU forbids that usage conflict). Returns null (after
   * queuing an error) when the binding is stale.
   *
   * The result is a scratch object, overwritten by the next call: a caller
   * that keeps it (held work) copies it.
   *
   * @param binding The count's binding.
   * @param n Storage bindings of the launch.
   * @param kernel Kernel name, for errors.
   * @param bound The slices of the launch's bindings, or null when they were
   * just resolved (the bind group cache's scratch arrays then name their buffers).
   * @returns The source, and the page holding the count.
   */
  source(
    binding: BufferBinding,
    n: number,
    kernel: string,
    bound: readonly Slice[] | null,
  ): IndirectSource & { page: Page } | null {
    const stream = this.#stream;
    const desc = binding.memory;
    let slice = desc.slice;
    let conflict = false;
    if (
      slice !== null && slice.owner === desc && slice.page.storage.resource !== null &&
      slotOf(binding.stream, this.#ctx.settings.maxStreams) === stream.slot
    ) {
      // This stream's memory, resolved: no pin, and a conflict is a shared page.
      const page = slice.page;
      if (bound !== null) {
        for (let i = 0; i < n; i++) if (bound[i]!.page === page) conflict = true;
      } else {
        const ids = this.#ctx.bindGroups.ids;
        const id = page.storage.id;
        for (let i = 0; i < n; i++) if (ids[i] === id) conflict = true;
      }
    } else {
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
    if (!conflict) {
      out.buffer = page.storage.resource!;
      out.offset = slice.offset + binding.offsetStart;
      return out;
    }
    if (this.#buffer === null) {
      this.#buffer = this.#ctx.device.createBuffer({
        label: `${stream.label} indirect counts`,
        size: INDIRECT_BYTES,
        usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST,
      });
    }
    const at = this.#used;
    this.#used += 16;
    stream.copy(page, page.storage.resource!, slice.offset + binding.offsetStart, this.#buffer, at, 12);
    out.buffer = this.#buffer;
    out.offset = at;
    return out;
  }

  /** Starts refilling the indirect buffer from its start (after a submit). */
  reset(): void {
    this.#used = 0;
  }

  /** Destroys the indirect buffer, if any (teardown). */
  destroy(): void {
    this.#buffer?.destroy();
  }
}
