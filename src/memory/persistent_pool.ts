/**
 * Exact-size reuse, one buffer per allocation (CubeCL's persistent pool, at
 * routing position 255). Used for weights in persistent allocation mode and for
 * everything allocated inside a graph prepare/capture window.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { pageIsFree, PoolPages } from "./_pool_pages.ts";
import type { ManagedMemory, Slice } from "../contract/managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";

/** Exact effective-size reuse; never rebuilt by `installMemoryPools`. */
export class PersistentPool implements MemoryPool {
  #pages: PoolPages;
  /** Index of the pages' slices by effective size, each list in creation order. */
  #bySize = new Map<number, Slice[]>();

  /**
   * Creates the instance.
   *
   * @param storage Where buffers come from.
   * @param label Prefix of the GPU labels of its buffers.
   */
  constructor(storage: ComputeStorage, label: string) {
    this.#pages = new PoolPages(storage, label, "buffer");
  }

  get shape(): PoolShape {
    return { kind: "persistent" };
  }

  get pageCount(): number {
    return this.#pages.count;
  }

  accept(_size: number): boolean {
    return true;
  }

  /** True when a slice of this exact effective size exists (free or not). */
  hasSize(size: number): boolean {
    return this.#bySize.has(alignUp(size, this.#pages.alignment));
  }

  tryReserve(size: number): ManagedMemory | null {
    const eff = alignUp(size, this.#pages.alignment);
    const slice = this.#bySize.get(eff)?.find((s) => s.isFree());
    return slice === undefined ? null : this.#pages.assign(slice, size, eff - size);
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    const eff = alignUp(size, this.#pages.alignment);
    const slice = this.#pages.add(eff, lazy).slices[0]!;
    this.#index(slice);
    return this.#pages.assign(slice, size, eff - size);
  }

  #index(slice: Slice): void {
    const eff = slice.effectiveSize;
    const list = this.#bySize.get(eff);
    if (list === undefined) this.#bySize.set(eff, [slice]);
    else list.push(slice);
  }

  usage(): MemoryUsage {
    return this.#pages.usage();
  }

  report(): MemoryPoolReport {
    return this.#pages.report(this.shape);
  }

  cleanup(_reservations: number, explicit: boolean): void {
    if (!explicit) return;
    this.#pages.freeWhere(pageIsFree);
    this.#bySize.clear();
    for (const page of this.#pages.list) this.#index(page.slices[0]!);
  }
}
