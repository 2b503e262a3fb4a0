/**
 * Memory for indirect workgroup counts, apart from every storage binding.
 *
 * An indirect dispatch reads its three u32 counts from a buffer that WebGPU
 * forbids the same dispatch to bind as writable storage. Counts carved from
 * the main pools share pages with the launch's bindings, so each such launch
 * had to copy its count out first, which ends the compute pass. Counts made
 * with `createCount`/`emptyCount` come from this pool, whose pages hold counts
 * only: a launch that binds ordinary memory never conflicts with them, and
 * dispatches from them in place. A kernel may still write a count through a
 * storage binding of its own (a launch of its own).
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { MemoryPoolReport, MemoryUsage } from "../contract/memory_types.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import { SlicedPool } from "./sliced_pool.ts";

/** Bytes of one count: the three u32 workgroup counts `dispatchWorkgroupsIndirect` reads. */
export const COUNT_BYTES = 12;

/** Bytes of one page of counts (at a 256 B alignment, 256 counts). */
const COUNT_PAGE_BYTES = 64 * 1024;

/** The counts of one stream. */
export class CountPool {
  #pool: SlicedPool;
  #reservations = 0;

  /**
   * Creates the pool.
   *
   * @param storage The stream's storage (its buffers allow `INDIRECT`).
   * @param label Prefix of the GPU labels of its pages, e.g. `"stream 0"`.
   */
  constructor(storage: ComputeStorage, label: string) {
    const page = alignUp(Math.max(COUNT_PAGE_BYTES, storage.alignment), storage.alignment);
    this.#pool = new SlicedPool(storage, { pageSize: page, maxSliceSize: storage.alignment }, `${label} counts`);
  }

  /**
   * Reserves one count.
   *
   * @param lazy Mint a page without device memory (dry run).
   * @returns A descriptor holding one caller reference besides the pool's.
   */
  reserve(lazy: boolean): ManagedMemory {
    this.#reservations++;
    return this.#pool.tryReserve(COUNT_BYTES) ?? this.#pool.alloc(COUNT_BYTES, lazy);
  }

  /** @returns The pool's usage. */
  usage(): MemoryUsage {
    return this.#pool.usage();
  }

  /** @returns The pool's usage, shape and high-water marks. */
  report(): MemoryPoolReport {
    return this.#pool.report();
  }

  /** Frees every fully free page (an explicit cleanup). */
  cleanup(): void {
    this.#pool.cleanup(this.#reservations, true);
  }
}
