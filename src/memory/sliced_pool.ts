/**
 * A pool that carves many allocations out of large pages (CubeCL's sliced
 * pool). First fit over pages in creation order, coalescing free neighbours.
 *
 * @module
 */

import { alignDown, paddingFor } from "../_util/align.ts";
import { IoError } from "../errors.ts";
import { PoolPages } from "./_pool_pages.ts";
import { type ManagedMemory, type Page, poolOwned, Slice } from "../contract/managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";

/** Shape of a sliced pool, in bytes. */
export interface SlicedPoolOptions {
  /** Size of each page (device buffer). */
  pageSize: number;
  /** Largest allocation carved from a page. */
  maxSliceSize: number;
  /** Optional cap on the bytes of all pages together. */
  maxPoolSize?: number;
}

/** Most pages a sliced pool may hold (the configuration check uses it too). */
export const MAX_SLICED_POOL_PAGES = 65535;

/** Many allocations per `GPUBuffer`, first fit, coalescing. */
export class SlicedPool implements MemoryPool {
  #pages: PoolPages;
  #pageSize: number;
  #maxSlice: number;
  #maxPages: number;
  #cap: number | undefined;

  /**
   * Creates the instance.
   *
   * @param storage Where pages come from.
   * @param options The pool's shape (already aligned).
   * @param label Prefix of the GPU labels of its pages.
   */
  constructor(storage: ComputeStorage, options: SlicedPoolOptions, label: string) {
    this.#pages = new PoolPages(storage, label, "page");
    this.#cap = options.maxPoolSize;
    let page = options.pageSize;
    if (this.#cap !== undefined && this.#cap < page) {
      page = Math.max(storage.alignment, alignDown(this.#cap, storage.alignment));
    }
    this.#pageSize = page;
    this.#maxSlice = Math.min(options.maxSliceSize, page);
    this.#maxPages = this.#cap === undefined
      ? MAX_SLICED_POOL_PAGES
      : Math.min(MAX_SLICED_POOL_PAGES, Math.floor(this.#cap / page));
  }

  get shape(): PoolShape {
    return {
      type: "sliced",
      pageSize: this.#pageSize,
      maxSliceSize: this.#maxSlice,
      ...(this.#cap === undefined ? {} : { maxPoolSize: this.#cap }),
    };
  }

  get pageCount(): number {
    return this.#pages.count;
  }

  accept(size: number): boolean {
    if (size <= this.#maxSlice) return true;
    if (this.#cap !== undefined) return false;
    const waste = this.#pageSize - size;
    return waste >= 0 && waste * 5 < this.#pageSize;
  }

  tryReserve(size: number): ManagedMemory | null {
    for (const page of this.#pages.list) {
      const desc = this.#reserveIn(page, size);
      if (desc !== null) return desc;
    }
    return null;
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    if (this.#pages.count >= this.#maxPages) {
      const capacity = this.#maxPages * this.#pageSize;
      const inUse = this.#pages.usage().bytesInUse;
      throw new IoError(
        "pool-capacity-exceeded",
        `${this.#pages.label}: cannot reserve ${size} B, the pool is capped at ${capacity} B (${this.#maxPages} pages of ${this.#pageSize} B) and ${inUse} B are in use`,
        { size, capacity, inUse },
      );
    }
    const page = this.#pages.add(this.#pageSize, lazy);
    const desc = this.#reserveIn(page, size);
    if (desc === null) throw new Error(`${this.#pages.label}: a fresh page could not hold ${size} B`);
    return desc;
  }

  /** Coalesces `page`, then carves `size` bytes from its first free slice that fits. */
  #reserveIn(page: Page, size: number): ManagedMemory | null {
    const padding = paddingFor(size, this.#pages.alignment);
    const need = size + padding;
    coalesce(page);
    const slices = page.slices;
    const i = slices.findIndex((s) => s.isFree() && s.effectiveSize >= need);
    if (i < 0) return null;
    const s = slices[i]!;
    const extent = s.effectiveSize;
    if (extent > need) {
      slices.splice(i + 1, 0, new Slice(page, s.offset + need, extent - need, 0, poolOwned()));
    }
    return this.#pages.assign(s, size, padding);
  }

  usage(): MemoryUsage {
    return this.#pages.usage();
  }

  report(): MemoryPoolReport {
    return this.#pages.report(this.shape);
  }

  cleanup(_reservations: number, explicit: boolean): void {
    if (!explicit) return;
    this.#pages.freeWhere((page) => {
      coalesce(page);
      const only = page.slices[0]!;
      if (page.slices.length !== 1 || !only.isFree()) return false;
      return true;
    });
  }
}

/** Merges runs of adjacent free slices of a page into one free slice. */
function coalesce(page: Page): void {
  const slices = page.slices;
  let i = 0;
  while (i < slices.length - 1) {
    const a = slices[i]!;
    const b = slices[i + 1]!;
    if (a.isFree() && b.isFree()) {
      a.size = a.effectiveSize + b.effectiveSize;
      a.padding = 0;
      b.detach();
      slices.splice(i + 1, 1);
    } else {
      i++;
    }
  }
}
