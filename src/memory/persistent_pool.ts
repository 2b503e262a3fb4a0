/**
 * Exact-size reuse, one buffer per allocation (CubeCL's persistent pool, at
 * routing position 255). Used for weights in persistent allocation mode and for
 * everything allocated inside a graph prepare/capture window.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { type ManagedMemory, Page, poolOwned, Slice } from "./managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "./memory_usage.ts";
import type { ComputeStorage } from "./storage.ts";

/** Exact effective-size reuse; never rebuilt by `installMemoryPools`. */
export class PersistentPool implements MemoryPool {
  #storage: ComputeStorage;
  #align: number;
  #bySize = new Map<number, Slice[]>();
  #count = 0;
  #peak = 0;
  #largest = 0;
  #label: string;
  #pageNo = 0;

  /**
   * Creates the instance.
   *
   * @param storage Where buffers come from.
   * @param label Prefix of the GPU labels of its buffers.
   */
  constructor(storage: ComputeStorage, label: string) {
    this.#storage = storage;
    this.#align = storage.alignment;
    this.#label = label;
  }

  get shape(): PoolShape {
    return { type: "persistent" };
  }

  get pageCount(): number {
    return this.#count;
  }

  accept(_size: number): boolean {
    return true;
  }

  /** True when a slice of this exact effective size exists (free or not). */
  hasSize(size: number): boolean {
    return this.#bySize.has(alignUp(size, this.#align));
  }

  tryReserve(size: number): ManagedMemory | null {
    const eff = alignUp(size, this.#align);
    const list = this.#bySize.get(eff);
    if (list === undefined) return null;
    for (const s of list) {
      if (!s.isFree()) continue;
      s.size = size;
      s.padding = eff - size;
      if (size > this.#largest) this.#largest = size;
      return s.assignFresh();
    }
    return null;
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    const eff = alignUp(size, this.#align);
    const handle = this.#storage.alloc(
      eff,
      `${this.#label} buffer ${this.#pageNo++} (${eff} B)`,
      lazy,
    );
    const page = new Page(handle);
    const slice = new Slice(page, 0, size, eff - size, poolOwned());
    page.slices.push(slice);
    let list = this.#bySize.get(eff);
    if (list === undefined) this.#bySize.set(eff, list = []);
    list.push(slice);
    this.#count++;
    if (this.#count > this.#peak) this.#peak = this.#count;
    if (size > this.#largest) this.#largest = size;
    return slice.assignFresh();
  }

  usage(): MemoryUsage {
    const u = { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 };
    for (const list of this.#bySize.values()) {
      for (const s of list) {
        u.bytesReserved += s.page.storage.size;
        if (s.isFree()) continue;
        u.numberAllocs++;
        u.bytesInUse += s.size;
        u.bytesPadding += s.padding;
      }
    }
    return u;
  }

  report(): MemoryPoolReport {
    let unmapped = 0;
    for (const list of this.#bySize.values()) for (const s of list) if (s.page.lazy) unmapped++;
    return {
      kind: this.shape,
      usage: this.usage(),
      pages: this.#count,
      pagesPeak: this.#peak,
      pagesUnmapped: unmapped,
      largestAlloc: this.#largest,
    };
  }

  cleanup(_reservations: number, explicit: boolean): void {
    if (!explicit) return;
    for (const [eff, list] of this.#bySize) {
      const kept = list.filter((s) => {
        if (!s.isFree()) return true;
        this.#storage.dealloc(s.page.storage);
        this.#count--;
        return false;
      });
      if (kept.length === 0) this.#bySize.delete(eff);
      else this.#bySize.set(eff, kept);
    }
  }
}
