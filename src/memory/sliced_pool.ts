/**
 * A pool that carves many allocations out of large pages (CubeCL's sliced
 * pool). First fit over pages in creation order, coalescing free neighbours.
 *
 * @module
 */

import { alignDown, paddingFor } from "../_util/align.ts";
import { IoError } from "../errors.ts";
import { type ManagedMemory, Page, poolOwned, Slice } from "./managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "./memory_usage.ts";
import type { ComputeStorage } from "./storage.ts";

/** Shape of a sliced pool, in bytes. */
export interface SlicedPoolOptions {
  /** Size of each page (device buffer). */
  pageSize: number;
  /** Largest allocation carved from a page. */
  maxSliceSize: number;
  /** Optional cap on the bytes of all pages together. */
  maxPoolSize?: number;
}

const MAX_PAGES = 65535;

/** Many allocations per `GPUBuffer`, first fit, coalescing. */
export class SlicedPool implements MemoryPool {
  #storage: ComputeStorage;
  #align: number;
  #pageSize: number;
  #maxSlice: number;
  #maxPages: number;
  #cap: number | undefined;
  #pages: Page[] = [];
  #peak = 0;
  #largest = 0;
  #label: string;
  #pageNo = 0;

  /**
   * Creates the instance.
   *
   * @param storage Where pages come from.
   * @param options The pool's shape (already aligned).
   * @param label Prefix of the GPU labels of its pages.
   */
  constructor(storage: ComputeStorage, options: SlicedPoolOptions, label: string) {
    this.#storage = storage;
    this.#align = storage.alignment;
    this.#label = label;
    this.#cap = options.maxPoolSize;
    let page = options.pageSize;
    if (this.#cap !== undefined && this.#cap < page) {
      page = Math.max(this.#align, alignDown(this.#cap, this.#align));
    }
    this.#pageSize = page;
    this.#maxSlice = Math.min(options.maxSliceSize, page);
    this.#maxPages = this.#cap === undefined ? MAX_PAGES : Math.min(MAX_PAGES, Math.floor(this.#cap / page));
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
    return this.#pages.length;
  }

  accept(size: number): boolean {
    if (size <= this.#maxSlice) return true;
    if (this.#cap !== undefined) return false;
    const waste = this.#pageSize - size;
    return waste >= 0 && waste * 5 < this.#pageSize;
  }

  tryReserve(size: number): ManagedMemory | null {
    for (const page of this.#pages) {
      const desc = this.#reserveIn(page, size);
      if (desc !== null) return desc;
    }
    return null;
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    if (this.#pages.length >= this.#maxPages) {
      throw new IoError(
        "pool-capacity-exceeded",
        `${this.#label}: cannot reserve ${size} B, the pool is capped at ${
          this.#maxPages * this.#pageSize
        } B (${this.#maxPages} pages of ${this.#pageSize} B) and ${this.#inUse()} B are in use`,
        { size, capacity: this.#maxPages * this.#pageSize, inUse: this.#inUse() },
      );
    }
    const handle = this.#storage.alloc(
      this.#pageSize,
      `${this.#label} page ${this.#pageNo++} (${this.#pageSize} B)`,
      lazy,
    );
    const page = new Page(handle);
    page.slices.push(new Slice(page, 0, this.#pageSize, 0, poolOwned()));
    this.#pages.push(page);
    if (this.#pages.length > this.#peak) this.#peak = this.#pages.length;
    const desc = this.#reserveIn(page, size);
    if (desc === null) throw new Error(`${this.#label}: a fresh page could not hold ${size} B`);
    return desc;
  }

  #reserveIn(page: Page, size: number): ManagedMemory | null {
    const padding = paddingFor(size, this.#align);
    const need = size + padding;
    coalesce(page);
    const slices = page.slices;
    for (let i = 0; i < slices.length; i++) {
      const s = slices[i]!;
      if (!s.isFree()) continue;
      const extent = s.effectiveSize;
      if (extent < need) continue;
      if (extent > need) {
        slices.splice(i + 1, 0, new Slice(page, s.offset + need, extent - need, 0, poolOwned()));
      }
      s.size = size;
      s.padding = padding;
      if (size > this.#largest) this.#largest = size;
      return s.assignFresh();
    }
    return null;
  }

  #inUse(): number {
    let n = 0;
    for (const p of this.#pages) for (const s of p.slices) if (!s.isFree()) n += s.size;
    return n;
  }

  usage(): MemoryUsage {
    const u = { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 };
    for (const p of this.#pages) {
      u.bytesReserved += p.storage.size;
      for (const s of p.slices) {
        if (s.isFree()) continue;
        u.numberAllocs++;
        u.bytesInUse += s.size;
        u.bytesPadding += s.padding;
      }
    }
    return u;
  }

  report(): MemoryPoolReport {
    return {
      kind: this.shape,
      usage: this.usage(),
      pages: this.#pages.length,
      pagesPeak: this.#peak,
      pagesUnmapped: this.#pages.filter((p) => p.lazy).length,
      largestAlloc: this.#largest,
    };
  }

  cleanup(_reservations: number, explicit: boolean): void {
    if (!explicit) return;
    const kept: Page[] = [];
    for (const page of this.#pages) {
      coalesce(page);
      if (page.slices.length === 1 && page.slices[0]!.isFree()) {
        const last = page.slices[0]!;
        if (last.owner.slice === last) last.owner.slice = null;
        this.#storage.dealloc(page.storage);
      } else {
        kept.push(page);
      }
    }
    this.#pages = kept;
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
      if (b.owner.slice === b) b.owner.slice = null;
      slices.splice(i + 1, 1);
    } else {
      i++;
    }
  }
}
