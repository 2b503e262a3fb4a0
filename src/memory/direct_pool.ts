/**
 * One exact-size buffer per reservation, reused only by identical size, with
 * an optional reclaim watermark (CubeCL's direct pool).
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { type ManagedMemory, Page, poolOwned, Slice } from "./managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "./memory_usage.ts";
import type { ComputeStorage } from "./storage.ts";

/** Shape of a direct pool. */
export interface DirectPoolOptions {
  /** Bytes above which free buffers are released before allocating; a watermark, not a cap. */
  reclaimAt?: number;
}

/** Accepts every size; reuses a free buffer only of exactly the same effective size. */
export class DirectPool implements MemoryPool {
  #storage: ComputeStorage;
  #align: number;
  #reclaimAt: number | undefined;
  #slices: Slice[] = [];
  #peak = 0;
  #largest = 0;
  #label: string;
  #pageNo = 0;

  /**
   * Creates the instance.
   *
   * @param storage Where buffers come from.
   * @param options The watermark.
   * @param label Prefix of the GPU labels of its buffers.
   */
  constructor(storage: ComputeStorage, options: DirectPoolOptions, label: string) {
    this.#storage = storage;
    this.#align = storage.alignment;
    this.#reclaimAt = options.reclaimAt;
    this.#label = label;
  }

  get shape(): PoolShape {
    return { type: "direct", ...(this.#reclaimAt === undefined ? {} : { reclaimAt: this.#reclaimAt }) };
  }

  get pageCount(): number {
    return this.#slices.length;
  }

  accept(_size: number): boolean {
    return true;
  }

  tryReserve(size: number): ManagedMemory | null {
    const eff = alignUp(size, this.#align);
    for (const s of this.#slices) {
      if (!s.isFree() || s.effectiveSize !== eff) continue;
      s.size = size;
      s.padding = eff - size;
      if (size > this.#largest) this.#largest = size;
      return s.assignFresh();
    }
    return null;
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    const eff = alignUp(size, this.#align);
    if (this.#reclaimAt !== undefined) {
      let reserved = this.#reserved();
      for (let i = 0; i < this.#slices.length && reserved + eff > this.#reclaimAt;) {
        const s = this.#slices[i]!;
        if (s.isFree()) {
          reserved -= s.page.storage.size;
          this.#storage.dealloc(s.page.storage);
          this.#slices.splice(i, 1);
        } else {
          i++;
        }
      }
    }
    const handle = this.#storage.alloc(
      eff,
      `${this.#label} buffer ${this.#pageNo++} (${eff} B)`,
      lazy,
    );
    const page = new Page(handle);
    const slice = new Slice(page, 0, size, eff - size, poolOwned());
    page.slices.push(slice);
    this.#slices.push(slice);
    if (this.#slices.length > this.#peak) this.#peak = this.#slices.length;
    if (size > this.#largest) this.#largest = size;
    return slice.assignFresh();
  }

  #reserved(): number {
    let n = 0;
    for (const s of this.#slices) n += s.page.storage.size;
    return n;
  }

  usage(): MemoryUsage {
    const u = { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: this.#reserved() };
    for (const s of this.#slices) {
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
      pages: this.#slices.length,
      pagesPeak: this.#peak,
      pagesUnmapped: this.#slices.filter((s) => s.page.lazy).length,
      largestAlloc: this.#largest,
    };
  }

  cleanup(_reservations: number, explicit: boolean): void {
    if (!explicit) return;
    this.#slices = this.#slices.filter((s) => {
      if (!s.isFree()) return true;
      this.#storage.dealloc(s.page.storage);
      return false;
    });
  }
}
