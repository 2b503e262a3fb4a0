/**
 * One allocation per page (CubeCL's exclusive pool). Pages are sized from a
 * moving average of requests so that similar sizes reuse each other, and idle
 * pages are freed by a periodic sweep.
 *
 * @module
 */

import { alignUp, paddingFor } from "../_util/align.ts";
import { IoError } from "../errors.ts";
import { type ManagedMemory, Page, poolOwned, Slice } from "./managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "./memory_usage.ts";
import type { ComputeStorage } from "./storage.ts";

/** Shape of an exclusive pool, in bytes. */
export interface ExclusivePoolOptions {
  /** Largest allocation served; 0 makes a pool for zero-byte allocations. */
  maxAllocSize: number;
  /** Reservations between idle sweeps × 5; no sweeps when absent. */
  deallocPeriod?: number;
}

interface ExclusivePage {
  page: Page;
  freeCount: number;
}

/** One `GPUBuffer` per allocation, reused by size. */
export class ExclusivePool implements MemoryPool {
  #storage: ComputeStorage;
  #align: number;
  #max: number;
  #period: number | undefined;
  #avg: number;
  #pages: ExclusivePage[] = [];
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
  constructor(storage: ComputeStorage, options: ExclusivePoolOptions, label: string) {
    this.#storage = storage;
    this.#align = storage.alignment;
    this.#max = options.maxAllocSize;
    this.#period = options.deallocPeriod;
    this.#avg = options.maxAllocSize / 2;
    this.#label = label;
  }

  get shape(): PoolShape {
    return {
      type: "exclusive",
      maxAllocSize: this.#max,
      ...(this.#period === undefined ? {} : { deallocPeriod: this.#period }),
    };
  }

  get pageCount(): number {
    return this.#pages.length;
  }

  accept(size: number): boolean {
    return size <= this.#max;
  }

  tryReserve(size: number): ManagedMemory | null {
    this.#avg = this.#avg * 0.99 + size * 0.01;
    let best: ExclusivePage | null = null;
    for (const p of this.#pages) {
      if (!p.page.slices[0]!.isFree() || p.page.storage.size < size) continue;
      if (best === null || p.freeCount < best.freeCount) best = p;
    }
    if (best === null) return null;
    best.freeCount = Math.max(0, best.freeCount - 1);
    const slice = best.page.slices[0]!;
    slice.size = size;
    slice.padding = paddingFor(size, this.#align);
    if (size > this.#largest) this.#largest = size;
    return slice.assignFresh();
  }

  alloc(size: number, _lazy: boolean): ManagedMemory {
    if (size > this.#max) {
      throw new IoError(
        "buffer-too-big",
        `${this.#label}: ${size} B is above this pool's largest allocation (${this.#max} B)`,
        { size },
      );
    }
    const bytes = alignUp(Math.ceil(Math.max(this.#avg, size)), this.#align);
    const handle = this.#storage.alloc(bytes, `${this.#label} page ${this.#pageNo++} (${bytes} B)`);
    const page = new Page(handle);
    const slice = new Slice(page, 0, size, paddingFor(size, this.#align), poolOwned());
    page.slices.push(slice);
    this.#pages.push({ page, freeCount: 4 });
    if (this.#pages.length > this.#peak) this.#peak = this.#pages.length;
    if (size > this.#largest) this.#largest = size;
    return slice.assignFresh();
  }

  usage(): MemoryUsage {
    const u = { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 };
    for (const { page } of this.#pages) {
      u.bytesReserved += page.storage.size;
      const s = page.slices[0]!;
      if (s.isFree()) continue;
      u.numberAllocs++;
      u.bytesInUse += s.size;
      u.bytesPadding += s.padding;
    }
    return u;
  }

  report(): MemoryPoolReport {
    return {
      kind: this.shape,
      usage: this.usage(),
      pages: this.#pages.length,
      pagesPeak: this.#peak,
      pagesUnmapped: 0,
      largestAlloc: this.#largest,
    };
  }

  cleanup(reservations: number, explicit: boolean): void {
    if (explicit) {
      this.#pages = this.#pages.filter((p) => !this.#freeIf(p, true));
      return;
    }
    if (this.#period === undefined) return;
    const every = Math.max(1, Math.floor(this.#period / 5));
    if (reservations % every !== 0) return;
    this.#pages = this.#pages.filter((p) => {
      if (!p.page.slices[0]!.isFree()) return true;
      p.freeCount++;
      return !this.#freeIf(p, p.freeCount >= 5);
    });
  }

  #freeIf(p: ExclusivePage, condition: boolean): boolean {
    if (!condition || !p.page.slices[0]!.isFree()) return false;
    this.#storage.dealloc(p.page.storage);
    return true;
  }
}
