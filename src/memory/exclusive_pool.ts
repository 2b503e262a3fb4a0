/**
 * One allocation per page (CubeCL's exclusive pool). Pages are sized from a
 * moving average of requests so that similar sizes reuse each other, or, with
 * `sizeClasses`, to the size class of the request (so that a page wastes at
 * most one class step and is reused only by requests of its size); idle pages
 * are freed by a periodic sweep.
 *
 * @module
 */

import { alignUp, paddingFor } from "../_util/align.ts";
import { IoError } from "../errors.ts";
import { pageIsFree, PoolPages } from "./_pool_pages.ts";
import type { ManagedMemory, Page } from "../contract/managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Shape of an exclusive pool, in bytes. */
export interface ExclusivePoolOptions {
  /** Largest allocation served; 0 makes a pool for zero-byte allocations. */
  maxAllocSize: number;
  /** Reservations between idle sweeps × 5; no sweeps when absent. */
  deallocPeriod?: number;
  /** Size classes per doubling; absent sizes pages from the moving average. */
  sizeClasses?: number;
}

/** `freeCount` of a new page: its first idle sweep frees it unless it was reused. */
const FRESH_FREE_COUNT = 4;
/** An idle sweep frees a free page whose `freeCount` reaches this. */
const FREE_AT = 5;

/** One `GPUBuffer` per allocation, reused by size. */
export class ExclusivePool implements MemoryPool {
  #pages: PoolPages;
  #max: number;
  #period: number | undefined;
  #avg: number;
  #classes: number | undefined;
  /** CubeCL's per-page `free_count`; weak, so a freed page's entry goes with it. */
  #freeCount = new WeakMap<Page, number>();

  /**
   * Creates the instance.
   *
   * @param storage Where pages come from.
   * @param options The pool's shape (already aligned).
   * @param label Prefix of the GPU labels of its pages.
   */
  constructor(storage: ComputeStorage, options: ExclusivePoolOptions, label: string) {
    this.#pages = new PoolPages(storage, label, "page");
    this.#max = options.maxAllocSize;
    this.#period = options.deallocPeriod;
    this.#avg = options.maxAllocSize / 2;
    this.#classes = options.sizeClasses;
  }

  get shape(): PoolShape {
    return {
      kind: "exclusive",
      maxAllocSize: this.#max,
      ...(this.#period === undefined ? {} : { deallocPeriod: this.#period }),
      ...(this.#classes === undefined ? {} : { sizeClasses: this.#classes }),
    };
  }

  get pageCount(): number {
    return this.#pages.count;
  }

  accept(size: number): boolean {
    return size <= this.#max;
  }

  tryReserve(size: number): ManagedMemory | null {
    this.#avg = this.#avg * 0.99 + size * 0.01;
    // With size classes: the smallest free page of this class or the next (CubeCL: any page that fits).
    const most = this.#classes === undefined ? Infinity : this.#classSize(this.#classSize(size) + 1);
    let best: Page | null = null;
    let bestCount = Infinity;
    let bestSize = Infinity;
    for (const page of this.#pages.list) {
      const bytes = page.storage.size;
      if (bytes < size || bytes > most || !pageIsFree(page)) continue;
      const count = this.#freeCount.get(page)!;
      if (this.#classes === undefined) {
        if (count >= bestCount) continue;
      } else if (bytes > bestSize || (bytes === bestSize && count >= bestCount)) continue;
      best = page;
      bestCount = count;
      bestSize = bytes;
    }
    if (best === null) return null;
    this.#freeCount.set(best, Math.max(0, bestCount - 1));
    return this.#pages.assign(best.slices[0]!, size, paddingFor(size, this.#pages.alignment));
  }

  alloc(size: number, _lazy: boolean): ManagedMemory {
    if (size > this.#max) {
      throw new IoError(
        "buffer-too-big",
        `${this.#pages.label}: ${formatBytesExact(size)} is above this pool's largest allocation (${
          formatBytesExact(this.#max)
        })`,
        { size },
      );
    }
    const align = this.#pages.alignment;
    // Exclusive pages are always eager, even under a dry run (CubeCL does the same).
    const bytes = this.#classes === undefined
      ? alignUp(Math.ceil(Math.max(this.#avg, size)), align)
      : this.#classSize(size);
    const page = this.#pages.add(bytes, false);
    this.#freeCount.set(page, FRESH_FREE_COUNT);
    return this.#pages.assign(page.slices[0]!, size, paddingFor(size, align));
  }

  /** The smallest class size (aligned, at most `maxAllocSize` unless `size` is above it) holding `size`. */
  #classSize(size: number): number {
    const n = this.#classes!;
    const align = this.#pages.alignment;
    if (size <= align) return align;
    let k = Math.ceil(Math.log2(size) * n);
    // log2 may land a few ulps off an exact class: step back while the class below still holds the size.
    while (Math.ceil(2 ** ((k - 1) / n)) >= size) k--;
    const bytes = alignUp(Math.ceil(2 ** (k / n)), align);
    return Math.max(size <= this.#max ? Math.min(bytes, this.#max) : bytes, alignUp(size, align));
  }

  usage(): MemoryUsage {
    return this.#pages.usage();
  }

  report(): MemoryPoolReport {
    return this.#pages.report(this.shape);
  }

  cleanup(reservations: number, explicit: boolean): void {
    if (explicit) {
      this.#pages.freeWhere(pageIsFree);
      return;
    }
    if (this.#period === undefined) return;
    if (reservations % Math.max(1, Math.floor(this.#period / 5)) !== 0) return;
    this.#pages.freeWhere((page) => {
      if (!pageIsFree(page)) return false;
      const count = this.#freeCount.get(page)! + 1;
      this.#freeCount.set(page, count);
      return count >= FREE_AT;
    });
  }
}
