/**
 * Where a stream's indirect launches read their workgroup counts. A count
 * normally stays where it is; when it lives in a buffer that the same launch
 * also binds as storage, WebGPU forbids the usage conflict, so the count is
 * first copied into a small stream-owned indirect buffer (created on first
 * use, refilled from its start after each submit).
 *
 * @module
 */

import type { Page } from "../contract/managed_memory.ts";
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
   * bindings were resolved). When the count lives in a buffer also bound as
   * writable storage (same page), it is copied to the stream-owned indirect
   * buffer first. Returns null (after queuing an error) when the binding is stale.
   *
   * @param binding The count's binding.
   * @param n Storage bindings of the launch.
   * @param kernel Kernel name, for errors.
   * @returns The source, and the page holding the count.
   */
  source(
    binding: BufferBinding,
    n: number,
    kernel: string,
  ): IndirectSource & { page: Page } | null {
    const r = this.#bindings.resolveIndirect(binding, n, kernel);
    if (r === null) return null;
    const stream = this.#stream;
    const slice = r.slice;
    stream.usePage(slice.page);
    const buffer = slice.page.storage.resource!;
    const offset = slice.offset + binding.offsetStart;
    if (!r.conflict) return { buffer, offset, page: slice.page };
    if (this.#buffer === null) {
      this.#buffer = this.#ctx.device.createBuffer({
        label: `${stream.label} indirect counts`,
        size: INDIRECT_BYTES,
        usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST,
      });
    }
    const at = this.#used;
    this.#used += 16;
    stream.copy(slice.page, buffer, offset, this.#buffer, at, 12);
    return { buffer: this.#buffer, offset: at, page: slice.page };
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
