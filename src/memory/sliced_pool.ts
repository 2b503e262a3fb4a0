/**
 * A pool that carves many allocations out of large pages (CubeCL's sliced
 * pool), coalescing free neighbours.
 *
 * Placement is CubeCL's first fit over pages in creation order, or best fit
 * (the smallest free slice that holds the request, over every page), which
 * leaves fewer unusable holes when sizes are mixed; a best-fit pool serves
 * only sizes up to its largest slice (no near-page strays, which would each
 * take a page of a pool meant for small slices). With `deallocPeriod`, a
 * page that stays entirely free while that many reservations of its manager go
 * by is given back (CubeCL's sliced pools keep every page until an explicit
 * cleanup); a page that some reservation uses at least that often is kept.
 * A pool that keeps making pages soon after giving some back (a loop whose
 * quiet phase outlasts the wait) doubles its wait, up to 32 times the
 * period: a steady loop stops creating buffers after a few rounds, while a
 * random churn keeps the short wait and its small reservation.
 *
 * A best-fit pool's work does not grow with the allocations it holds: a
 * release queues its slice on its page and the page on the pool
 * (`Page.queue`), the next reservation merges around the queued slices only,
 * and a sweep looks at the entirely free pages only (before, each release
 * cost a look at every slice of its page, and each reservation and sweep a
 * look at every page: `tests/regression/best_fit_release_scans_page_test.ts`).
 * A first-fit pool scans its pages at each reservation, as CubeCL's does.
 *
 * @module
 */

import { alignDown, paddingFor } from "../_util/align.ts";
import { IoError } from "../errors.ts";
import { FreeSlices } from "./_free_slices.ts";
import { pageIsFree, PoolPages } from "./_pool_pages.ts";
import { type ManagedMemory, type Page, poolOwned, Slice } from "../contract/managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import { type CompactionPolicy, Compactor, withCompactionDefaults } from "./_compaction.ts";
import type { SliceMover } from "./slice_mover.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Where a sliced pool puts a reservation among its free slices. */
export type SliceFit = "first" | "best";

/** Shape of a sliced pool, in bytes. */
export interface SlicedPoolOptions {
  /** Size of each page (device buffer). */
  pageSize: number;
  /** Largest allocation carved from a page. */
  maxSliceSize: number;
  /** Optional cap on the bytes of all pages together. */
  maxPoolSize?: number;
  /** Where a reservation goes among the free slices. @default "first" */
  fit?: SliceFit;
  /**
   * Reservations a page may stay entirely free before it is given back
   * (the wait doubles, up to 32 times, while given-back pages keep being
   * needed again); absent keeps pages.
   */
  deallocPeriod?: number;
  /**
   * Moves live slices to pack the pages (best fit only; see `_compaction.ts`),
   * over a window of `deallocPeriod` reservations (or 1,000); `true` or
   * missing fields take `compactionDefaults`; absent or false never moves.
   */
  compaction?: boolean | { slack?: number; budget?: number; every?: number };
}

/** Compaction's window, in reservations, for a pool without `deallocPeriod`. */
const COMPACTION_WINDOW = 1000;

/** Pages made soon after a give-back that double the wait (a loop re-taking what it gave back). */
const REGROWTH_EVENTS = 16;
/** "Soon": within this many times the current wait of the latest give-back. */
const REGROWTH_WINDOW = 16;
/** The wait grows to at most this many times `deallocPeriod`. */
const WAIT_GROWTH_MAX = 32;

/** Most pages a sliced pool may hold (the configuration check uses it too). */
export const MAX_SLICED_POOL_PAGES = 65535;

/** Many allocations per `GPUBuffer`, first or best fit, coalescing. */
export class SlicedPool implements MemoryPool {
  #pages: PoolPages;
  #pageSize: number;
  #maxSlice: number;
  #maxPages: number;
  #cap: number | undefined;
  #fit: SliceFit;
  /** `deallocPeriod` as configured. */
  #period: number | undefined;
  /** The wait now: the period, doubled each time pages came back soon after a give-back (see `alloc`). */
  #wait = 0;
  /** The clock at the latest idle give-back. */
  #gaveBackAt = -Infinity;
  /** Pages made soon after a give-back since the wait last grew. */
  #regrowths = 0;
  /** The manager's reservation count at the latest cleanup: the pool's clock. */
  #now = 0;
  #sweptAt = -1;
  /**
   * Per page, the clock when it was last seen holding or taking an
   * allocation (first fit: at each carve and sweep; best fit: at each carve).
   */
  #busyAt = new Map<Page, number>();
  /**
   * Best fit: the pages with slices freed since the pool last looked, filled
   * by the releases themselves (`Page.queue`), so that a reservation or a
   * sweep visits those pages only.
   */
  #queue: Page[] = [];
  /**
   * Best fit with `deallocPeriod`: the pages entirely free, with the clock
   * when each was last seen busy (its last carve, or the sweep before it was
   * found free), so that a sweep looks at these pages only.
   */
  #idle = new Map<Page, number>();
  /**
   * Best fit: every free slice of every page, by ascending extent, then older
   * page (so that newer pages drain and can be given back), then offset.
   * Pages flagged `released` are coalesced and re-listed before each search.
   */
  #free = new FreeSlices();
  #compactor: Compactor | null = null;
  #compaction: { slack: number; budget: number; every: number } | undefined;

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
    this.#fit = options.fit ?? "first";
    this.#period = options.deallocPeriod;
    this.#wait = options.deallocPeriod ?? 0;
    const given = options.compaction ?? false;
    if (this.#fit === "best" && given !== false) {
      const c = withCompactionDefaults(given, page);
      this.#compaction = c;
      this.#compactor = this.#compactorFor({ ...c, window: options.deallocPeriod ?? COMPACTION_WINDOW });
    }
  }

  #compactorFor(policy: CompactionPolicy): Compactor {
    return new Compactor({
      pageSize: this.#pageSize,
      pages: () => this.#pages.list,
      live: () => this.#pages.live,
      free: this.#free,
      refresh: () => this.#absorb(),
      carve: (at, size, padding) => {
        const s = this.#free.at(at);
        return this.#carve(s.page, s.page.slices.indexOf(s), size, padding, at);
      },
      giveBack: (gone) => {
        const before = this.#pages.count;
        this.#pages.freeWhere((p) => p === gone);
        this.#busyAt.delete(gone);
        this.#reindex();
        return this.#pages.count < before;
      },
    }, policy);
  }

  /** True when the pool moves live slices to pack its pages. */
  get compacts(): boolean {
    return this.#compactor !== null;
  }

  compact(mover: SliceMover): void {
    this.#compactor?.step(this.#now, mover);
  }

  reserveByMoving(size: number, mover: SliceMover): ManagedMemory | null {
    const compactor = this.#compactor;
    if (compactor === null) return null;
    if (compactor.makeRoom(this.#now, size + paddingFor(size, this.#pages.alignment), mover) === null) return null;
    const memory = this.tryReserve(size);
    if (memory === null) throw new Error(`${this.#pages.label}: a run freed for ${size} B could not hold it`);
    return memory;
  }

  get shape(): PoolShape {
    return {
      kind: "sliced",
      pageSize: this.#pageSize,
      maxSliceSize: this.#maxSlice,
      ...(this.#cap === undefined ? {} : { maxPoolSize: this.#cap }),
      ...(this.#fit === "first" ? {} : { fit: this.#fit }),
      ...(this.#period === undefined ? {} : { deallocPeriod: this.#period }),
      ...(this.#compaction === undefined ? {} : { compaction: { ...this.#compaction } }),
    };
  }

  get pageCount(): number {
    return this.#pages.count;
  }

  accept(size: number): boolean {
    if (size <= this.#maxSlice) return true;
    // Near-page strays (CubeCL): first-fit pools without a cap only.
    if (this.#cap !== undefined || this.#fit === "best") return false;
    const waste = this.#pageSize - size;
    return waste >= 0 && waste * 5 < this.#pageSize;
  }

  tryReserve(size: number): ManagedMemory | null {
    const padding = paddingFor(size, this.#pages.alignment);
    const need = size + padding;
    if (this.#fit === "first") {
      for (const page of this.#pages.list) {
        coalesce(page);
        const i = firstFit(page.slices, need);
        if (i >= 0) return this.#carve(page, i, size, padding);
      }
      return null;
    }
    const free = this.#free;
    this.#absorb();
    const at = free.bestFit(need);
    if (at < 0) return null;
    const slice = free.at(at);
    const memory = this.#carve(slice.page, slice.page.slices.indexOf(slice), size, padding, at);
    this.#compactor?.noteLive(this.#now, this.#pages.live);
    return memory;
  }

  /**
   * Best fit: merges and lists the slices freed since the pool last looked,
   * page by queued page, and notes the pages that became entirely free.
   */
  #absorb(): void {
    const queue = this.#queue;
    if (queue.length === 0) return;
    for (const page of queue) {
      page.released = false;
      if (this.#free.absorb(page) && this.#period !== undefined && !this.#idle.has(page)) {
        // Busy at the last sweep (it would have been found free there otherwise), or carved since.
        this.#idle.set(page, Math.max(this.#busyAt.get(page) ?? this.#now, this.#sweptAt));
      }
    }
    queue.length = 0;
  }

  /** Lists every free slice of every page again (after an explicit cleanup freed pages). */
  #reindex(): void {
    this.#free.clear();
    this.#queue.length = 0;
    this.#idle.clear();
    for (const page of this.#pages.list) {
      page.released = false;
      page.freed.length = 0;
      this.#free.refresh(page);
    }
  }

  alloc(size: number, lazy: boolean): ManagedMemory {
    if (this.#pages.count >= this.#maxPages) {
      const capacity = this.#maxPages * this.#pageSize;
      const inUse = this.#pages.usage().bytesInUse;
      throw new IoError(
        "pool-capacity-exceeded",
        `${this.#pages.label}: cannot reserve ${formatBytesExact(size)}, the pool is capped at ${
          formatBytesExact(capacity)
        } (${this.#maxPages} pages of ${formatBytesExact(this.#pageSize)}) and ${formatBytesExact(inUse)} are in use`,
        { size, capacity, inUse },
      );
    }
    if (
      this.#period !== undefined && this.#now - this.#gaveBackAt <= REGROWTH_WINDOW * this.#wait &&
      ++this.#regrowths >= REGROWTH_EVENTS
    ) {
      this.#regrowths = 0;
      this.#wait = Math.min(2 * this.#wait, WAIT_GROWTH_MAX * this.#period);
    }
    const page = this.#pages.add(this.#pageSize, lazy);
    if (this.#fit === "best") page.queue = this.#queue;
    const padding = paddingFor(size, this.#pages.alignment);
    if (page.slices[0]!.effectiveSize < size + padding) {
      throw new Error(`${this.#pages.label}: a fresh page could not hold ${formatBytesExact(size)}`);
    }
    const memory = this.#carve(page, 0, size, padding);
    if (this.#compactor !== null) {
      this.#compactor.noteLive(this.#now, this.#pages.live);
      this.#compactor.pageMade(this.#now, this.#pages.count * this.#pageSize, this.#pages.live);
    }
    return memory;
  }

  /**
   * Carves `size` bytes (plus `padding`) from the front of free slice `i` of
   * `page`; a best-fit pool lists the remainder in place of the slice (at
   * position `listed` of its index, or as a new entry).
   */
  #carve(page: Page, i: number, size: number, padding: number, listed = -1): ManagedMemory {
    const slices = page.slices;
    const s = slices[i]!;
    const need = size + padding;
    const extent = s.effectiveSize;
    let rest: Slice | null = null;
    if (extent > need) {
      rest = new Slice(page, s.offset + need, extent - need, 0, poolOwned());
      slices.splice(i + 1, 0, rest);
    }
    if (listed >= 0) this.#free.replace(listed, rest);
    else if (rest !== null && this.#fit === "best") this.#free.add(rest);
    if (this.#period !== undefined) {
      this.#busyAt.set(page, this.#now);
      this.#idle.delete(page);
    }
    return this.#pages.assign(s, size, padding);
  }

  usage(): MemoryUsage {
    return this.#pages.usage();
  }

  report(): MemoryPoolReport {
    const report = this.#pages.report(this.shape);
    const done = this.#compactor?.done;
    if (done === undefined) return report;
    return { ...report, compaction: { moves: done.moves, bytesMoved: done.bytes, pagesGivenBack: done.pages } };
  }

  cleanup(reservations: number, explicit: boolean): void {
    this.#now = reservations;
    if (explicit) {
      this.#pages.freeWhere((page) => {
        coalesce(page);
        return page.slices.length === 1 && page.slices[0]!.isFree() && this.#busyAt.delete(page) !== null;
      });
      if (this.#fit === "best") this.#reindex();
      return;
    }
    if (this.#period === undefined || reservations === this.#sweptAt) return;
    const period = this.#wait;
    if (reservations % Math.max(1, Math.floor(period / 5)) !== 0) return;
    if (this.#fit === "best") {
      this.#sweepIdle(reservations, period);
      return;
    }
    this.#sweptAt = reservations;
    const before = this.#pages.count;
    this.#pages.freeWhere((page) => {
      if (!pageIsFree(page)) {
        this.#busyAt.set(page, reservations);
        return false;
      }
      if (reservations - (this.#busyAt.get(page) ?? reservations) < period) return false;
      this.#busyAt.delete(page);
      return true;
    });
    if (this.#pages.count === before) return;
    this.#gaveBackAt = reservations;
  }

  /**
   * Best fit's sweep: gives back the pages entirely free for `wait`
   * reservations, looking at the idle pages only (after taking in the
   * releases since the last look), and unlists their one free slice each.
   */
  #sweepIdle(reservations: number, wait: number): void {
    this.#absorb(); // against the previous sweep's clock
    this.#sweptAt = reservations;
    let gone: Set<Page> | null = null;
    for (const [page, since] of this.#idle) {
      if (reservations - since >= wait) (gone ??= new Set()).add(page);
    }
    if (gone === null) return;
    for (const page of gone) {
      this.#idle.delete(page);
      this.#busyAt.delete(page);
      this.#free.remove(page.slices[0]!);
      page.queue = null;
    }
    this.#pages.freeWhere((page) => gone.has(page));
    this.#gaveBackAt = reservations;
  }
}

/** Index of the first free slice of at least `need` bytes, or -1. */
function firstFit(slices: readonly Slice[], need: number): number {
  for (let i = 0; i < slices.length; i++) {
    const s = slices[i]!;
    if (s.effectiveSize >= need && s.isFree()) return i;
  }
  return -1;
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
