/**
 * The pages one memory pool holds, and the bookkeeping every pool kind shares:
 * numbered GPU labels, handing a slice to a fresh descriptor, freeing pages,
 * usage accounting and the report with its high-water marks.
 *
 * @module
 */

import { type LiveTally, type ManagedMemory, Page, poolOwned, Slice } from "../contract/managed_memory.ts";
import { emptyUsage } from "./memory_usage.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";
import { formatBytesExact } from "../_util/format.ts";

/** What the GPU labels call one page of a pool. */
export type PageNoun = "page" | "buffer";

/** A pool's pages in creation order, with its peak page count and largest allocation. */
export class PoolPages {
  #storage: ComputeStorage;
  #label: string;
  #noun: PageNoun;
  #pageNo = 0;
  #pages: Page[] = [];
  #peak = 0;
  #largest = 0;
  #tally: LiveTally = { live: 0 };

  /**
   * Creates the instance.
   *
   * @param storage Where pages come from.
   * @param label Prefix of the GPU labels of the pages.
   * @param noun What a label calls one page.
   */
  constructor(storage: ComputeStorage, label: string, noun: PageNoun) {
    this.#storage = storage;
    this.#label = label;
    this.#noun = noun;
  }

  /** Prefix of the GPU labels of the pages; pools name themselves with it in errors. */
  get label(): string {
    return this.#label;
  }

  /** The storage's offset and size alignment, in bytes. */
  get alignment(): number {
    return this.#storage.alignment;
  }

  /** The pages held now, in creation order. */
  get list(): readonly Page[] {
    return this.#pages;
  }

  /** Number of pages held now. */
  get count(): number {
    return this.#pages.length;
  }

  /**
   * Allocates a page of `bytes` bytes holding one free slice over all of it.
   *
   * @param bytes Size of the page.
   * @param lazy Mint the page without device memory (dry run).
   * @returns The new page, last in the list.
   */
  add(bytes: number, lazy: boolean): Page {
    const handle = this.#storage.alloc(
      bytes,
      `${this.#label} ${this.#noun} ${this.#pageNo++} (${formatBytesExact(bytes)})`,
      lazy,
    );
    const page = new Page(handle, this.#tally);
    page.slices.push(new Slice(page, 0, bytes, 0, poolOwned()));
    this.#pages.push(page);
    if (this.#pages.length > this.#peak) this.#peak = this.#pages.length;
    return page;
  }

  /**
   * Records `size` and `padding` on a free slice and hands it to a fresh
   * descriptor holding one caller reference besides the pool's.
   *
   * @param slice A free slice of one of the pages.
   * @param size Requested bytes.
   * @param padding Alignment padding after `size`.
   * @returns The fresh descriptor.
   */
  assign(slice: Slice, size: number, padding: number): ManagedMemory {
    slice.size = size;
    slice.padding = padding;
    if (size > this.#largest) this.#largest = size;
    this.#tally.live += size + padding;
    return slice.assignFresh();
  }

  /** Bytes of the live slices of every page, padding included (kept as slices are reserved and freed). */
  get live(): number {
    return this.#tally.live;
  }

  /**
   * Frees, in creation order, every page `free` picks; the others keep their
   * order. The freed pages' slices are unlinked from their descriptors.
   *
   * @param free Decides whether a page goes; called once per page, in order.
   */
  freeWhere(free: (page: Page) => boolean): void {
    this.#pages = this.#pages.filter((page) => {
      if (!free(page)) return true;
      for (const slice of page.slices) slice.detach();
      this.#storage.dealloc(page.storage);
      return false;
    });
  }

  /** Device bytes held by the pages, free or not. */
  reservedBytes(): number {
    let n = 0;
    for (const page of this.#pages) n += page.storage.size;
    return n;
  }

  /** Usage: live slices, their bytes and padding, and the bytes of every page. */
  usage(): MemoryUsage {
    const u = emptyUsage();
    for (const page of this.#pages) {
      u.bytesReserved += page.storage.size;
      for (const s of page.slices) {
        if (s.isFree()) continue;
        u.numberAllocs++;
        u.bytesInUse += s.size;
        u.bytesPadding += s.padding;
      }
    }
    return u;
  }

  /**
   * The pool's report.
   *
   * @param shape The pool's effective shape.
   * @returns Usage plus shape and high-water marks.
   */
  report(shape: PoolShape): MemoryPoolReport {
    return {
      shape,
      usage: this.usage(),
      pages: this.#pages.length,
      pagesPeak: this.#peak,
      pagesUnmapped: this.#pages.filter((p) => p.lazy).length,
      largestAlloc: this.#largest,
    };
  }
}

/** True when every slice of a page is free (for one-slice pages: its slice is). */
export function pageIsFree(page: Page): boolean {
  return page.slices.every((s) => s.isFree());
}
