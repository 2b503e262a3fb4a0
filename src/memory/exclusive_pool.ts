/**
 * One allocation per page (CubeCL's exclusive pool). Pages are sized from a
 * moving average of requests so that similar sizes reuse each other, and idle
 * pages are freed by a periodic sweep.
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

/** Shape of an exclusive pool, in bytes. */
export interface ExclusivePoolOptions {
  /** Largest allocation served; 0 makes a pool for zero-byte allocations. */
  maxAllocSize: number;
  /** Reservations between idle sweeps × 5; no sweeps when absent. */
  deallocPeriod?: number;
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
  }

  get shape(): PoolShape {
    return {
      type: "exclusive",
      maxAllocSize: this.#max,
      ...(this.#period === undefined ? {} : { deallocPeriod: this.#period }),
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
    let best: Page | null = null;
    let bestCount = Infinity;
    for (const page of this.#pages.list) {
      if (!pageIsFree(page) || page.storage.size < size) continue;
      const count = this.#freeCount.get(page)!;
      if (count >= bestCount) continue;
      best = page;
      bestCount = count;
    }
    if (best === null) return null;
    this.#freeCount.set(best, Math.max(0, bestCount - 1));
    return this.#pages.assign(best.slices[0]!, size, paddingFor(size, this.#pages.alignment));
  }

  alloc(size: number, _lazy: boolean): ManagedMemory {
    if (size > this.#max) {
      throw new IoError(
        "buffer-too-big",
        `${this.#pages.label}: ${size} B is above this pool's largest allocation (${this.#max} B)`,
        { size },
      );
    }
    const align = this.#pages.alignment;
    // Exclusive pages are always eager, even under a dry run (CubeCL does the same).
    const page = this.#pages.add(alignUp(Math.ceil(Math.max(this.#avg, size)), align), false);
    this.#freeCount.set(page, FRESH_FREE_COUNT);
    return this.#pages.assign(page.slices[0]!, size, paddingFor(size, align));
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
