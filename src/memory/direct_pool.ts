/**
 * One exact-size buffer per reservation, reused only by identical size, with
 * an optional reclaim watermark (CubeCL's direct pool).
 *
 * Deliberate departures from CubeCL's contract (3.3):
 * - The watermark is applied once the new buffer exists, not before it is
 *   made: the same free buffers are released (oldest first, until the held
 *   bytes are under `reclaimAt` again), but an allocation the storage refuses
 *   releases none.
 * - Buffers are kept in creation order and freed ones are dropped from the
 *   list; there are no tombstoned indices to reuse, so "index order" (for reuse
 *   and for reclaiming) is creation order.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { pageIsFree, PoolPages } from "./_pool_pages.ts";
import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";

/** Shape of a direct pool. */
export interface DirectPoolOptions {
  /** Bytes above which free buffers are released, oldest first, once a new buffer was made; a watermark, not a cap. */
  reclaimAt?: number;
}

/** Accepts every size; reuses a free buffer only of exactly the same effective size. */
export class DirectPool implements MemoryPool {
  #pages: PoolPages;
  #reclaimAt: number | undefined;

  /**
   * Creates the instance.
   *
   * @param storage Where buffers come from.
   * @param options The watermark.
   * @param label Prefix of the GPU labels of its buffers.
   */
  constructor(storage: ComputeStorage, options: DirectPoolOptions, label: string) {
    this.#pages = new PoolPages(storage, label, "buffer");
    this.#reclaimAt = options.reclaimAt;
  }

  get shape(): PoolShape {
    return { kind: "direct", ...(this.#reclaimAt === undefined ? {} : { reclaimAt: this.#reclaimAt }) };
  }

  get pageCount(): number {
    return this.#pages.count;
  }

  accept(_size: number): boolean {
    return true;
  }

  tryReserve(size: number): ManagedMemory | null {
    const eff = alignUp(size, this.#pages.alignment);
    for (const page of this.#pages.list) {
      const s = page.slices[0]!;
      if (s.isFree() && s.effectiveSize === eff) return this.#pages.assign(s, size, eff - size);
    }
    return null;
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    const eff = alignUp(size, this.#pages.alignment);
    // Reclaim only once the new buffer exists: a refused allocation frees nothing.
    const page = this.#pages.add(eff, lazy);
    const desc = this.#pages.assign(page.slices[0]!, size, eff - size);
    this.#reclaim();
    return desc;
  }

  /** Frees free buffers, oldest first, until the held bytes fit under the watermark (or none is left). */
  #reclaim(): void {
    if (this.#reclaimAt === undefined) return;
    let excess = this.#pages.reservedBytes() - this.#reclaimAt;
    this.#pages.freeWhere((page) => {
      if (excess <= 0 || !pageIsFree(page)) return false;
      excess -= page.storage.size;
      return true;
    });
  }

  usage(): MemoryUsage {
    return this.#pages.usage();
  }

  report(): MemoryPoolReport {
    return this.#pages.report(this.shape);
  }

  cleanup(_reservations: number, explicit: boolean): void {
    if (explicit) this.#pages.freeWhere(pageIsFree);
  }
}
