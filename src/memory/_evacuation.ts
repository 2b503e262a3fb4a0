/**
 * The moves of a compacting sliced pool: how full each page is, which runs
 * of neighbouring slices could be freed for a reservation, and moving live
 * slices into free slices of other pages (the bytes copied by the stream
 * that owns the memory, the descriptors pointed at their new slices).
 *
 * @module
 */

import { type ManagedMemory, type Page, poolOwned, type Slice } from "../contract/managed_memory.ts";
import { alignUp } from "../_util/align.ts";
import type { FreeSlices } from "./_free_slices.ts";
import { movable, type SliceMover } from "./slice_mover.ts";

/** What compaction needs of its pool. */
export interface CompactedPool {
  /** Bytes per page. */
  readonly pageSize: number;
  /** The pages, in creation order. */
  pages(): readonly Page[];
  /** Bytes of the pool's live slices, padding included. */
  live(): number;
  /** The free-slice index (up to date after `refresh`). */
  readonly free: FreeSlices;
  /** Merges and lists the free slices of pages flagged `released`. */
  refresh(): void;
  /**
   * Carves `size` bytes (plus `padding`) from the listed free slice at `at`.
   *
   * @param at A position in `free`.
   * @param size Requested bytes.
   * @param padding Alignment padding.
   * @returns A fresh descriptor of the carved slice.
   */
  carve(at: number, size: number, padding: number): ManagedMemory;
  /**
   * Gives an emptied page back.
   *
   * @param page A page whose slices are all free.
   * @returns False when the page was gone already (the idle sweep of the stream's submit took it).
   */
  giveBack(page: Page): boolean;
}

/** What a compaction step or a reservation made by moving did. */
export interface CompactionStep {
  /** Slices moved. */
  moves: number;
  /** Bytes copied. */
  bytes: number;
  /** Pages given back. */
  pages: number;
}

/** A page's live bytes, and whether it may be emptied (materialized, every live slice movable). */
export interface PageStats {
  /** The page. */
  page: Page;
  /** Bytes of its live slices, padding included. */
  live: number;
  /** True when every live slice of it may move. */
  movable: boolean;
}

/**
 * Live bytes per page, with the pool's totals (after merging released slices).
 *
 * @param pool The pool.
 * @returns Each page's figures, the live bytes and the bytes of every page.
 */
export function survey(pool: CompactedPool): { stats: PageStats[]; live: number; reserved: number } {
  pool.refresh();
  const stats: PageStats[] = [];
  let live = 0;
  let reserved = 0;
  for (const page of pool.pages()) {
    const st = pageStats(page);
    live += st.live;
    reserved += page.storage.size;
    stats.push(st);
  }
  return { stats, live, reserved };
}

/**
 * A page's live bytes, and whether every live slice of it may move.
 *
 * @param page The page.
 * @returns Its figures.
 */
export function pageStats(page: Page): PageStats {
  let live = 0;
  let ok = page.storage.resource !== null;
  for (const s of page.slices) {
    if (s.isFree()) continue;
    live += s.effectiveSize;
    if (ok && !movable(s)) ok = false;
  }
  return { page, live, movable: ok };
}

/** A run of neighbouring slices of a page spanning enough bytes, and its live slices. */
export interface Run {
  /** The page. */
  page: Page;
  /** Live bytes in the run. */
  live: number;
  /** Its live slices. */
  slices: Slice[];
}

/**
 * Per page that may take part in a move, the run of neighbouring slices
 * spanning at least `need` bytes with the fewest live bytes (all movable, at
 * most `budget`, at least one), fewest first.
 *
 * @param pool The pool.
 * @param need Bytes the run must span.
 * @param budget Most live bytes a run may hold.
 * @param mover Says which pages may take part.
 * @returns The runs.
 */
export function runs(pool: CompactedPool, need: number, budget: number, mover: SliceMover): Run[] {
  const out: Run[] = [];
  for (const page of pool.pages()) {
    if (page.storage.resource === null || page.storage.size < need || !mover.canUse(page)) continue;
    const slices = page.slices;
    let best = -1;
    let bestEnd = -1;
    let bestLive = Infinity;
    let j = 0;
    let extent = 0;
    let live = 0;
    for (let i = 0; i < slices.length; i++) {
      if (j < i) {
        j = i;
        extent = 0;
        live = 0;
      }
      while (j < slices.length && extent < need) {
        const s = slices[j]!;
        if (!s.isFree() && !movable(s)) break;
        extent += s.effectiveSize;
        if (!s.isFree()) live += s.effectiveSize;
        j++;
      }
      if (extent >= need && live < bestLive && live <= budget) {
        best = i;
        bestEnd = j;
        bestLive = live;
      }
      if (j === i) continue; // slice i cannot move: the next run starts after it
      const s = slices[i]!;
      extent -= s.effectiveSize;
      if (!s.isFree()) live -= s.effectiveSize;
    }
    // A run without live slices is a free run that best fit would have found.
    if (best < 0 || bestLive === 0) continue;
    out.push({ page, live: bestLive, slices: slices.slice(best, bestEnd).filter((s) => !s.isFree()) });
  }
  return out.sort((a, b) => a.live - b.live);
}

/** Where live slices of one page go: free slices of other pages, carved already. */
export interface Plan {
  /** The slices to move. */
  from: Slice[];
  /** Their new places (fresh descriptors, one per slice). */
  to: ManagedMemory[];
  /** Bytes the moves copy. */
  bytes: number;
}

/**
 * Reserves a place in other pages for each of `slices` (largest first, each
 * in the smallest free slice that holds it), or none when they do not all
 * fit. Nothing is copied yet: `commit` moves them, `cancel` frees the places.
 *
 * @param pool The pool.
 * @param page The page they live in.
 * @param slices Live, movable slices of `page`.
 * @param mover Says which pages may take part.
 * @param avoid Pages that must not take them (pages being emptied).
 * @returns The plan, or null.
 */
export function plan(
  pool: CompactedPool,
  page: Page,
  slices: Slice[],
  mover: SliceMover,
  avoid: ReadonlySet<Page> | null = null,
): Plan | null {
  const from = slices.sort((a, b) => b.effectiveSize - a.effectiveSize);
  const free = pool.free;
  const ok = (p: Page) =>
    p !== page && p.storage.resource !== null && mover.canUse(p) && (avoid === null || !avoid.has(p));
  const to: ManagedMemory[] = [];
  let bytes = 0;
  for (const s of from) {
    const at = free.bestFitWhere(s.effectiveSize, ok);
    if (at < 0) {
      cancel({ from, to, bytes });
      return null;
    }
    to.push(pool.carve(at, s.size, s.padding));
    bytes += alignUp(s.size, 4);
  }
  return { from, to, bytes };
}

/**
 * Frees the places a plan reserved.
 *
 * @param p The plan.
 */
export function cancel(p: Plan): void {
  for (const d of p.to) d.drop();
}

/**
 * Moves a plan's slices: queues each copy on the mover, points each
 * descriptor at its new slice and frees the old one.
 *
 * @param p The plan.
 * @param mover Copies in the owning stream's order.
 */
export function commit(p: Plan, mover: SliceMover): void {
  for (let i = 0; i < p.from.length; i++) {
    const from = p.from[i]!;
    const to = p.to[i]!.slice!;
    const n = alignUp(from.size, 4);
    if (n > 0) mover.copy(from, to, n);
    rehome(from, to);
  }
}

/** Points the descriptor that owns `from` at `to` (as large), and frees `from`. */
function rehome(from: Slice, to: Slice): void {
  const memory = from.owner;
  to.owner = memory;
  memory.slice = to;
  from.owner = poolOwned();
  from.page.noteFreed(from);
  from.page.tally.live -= from.effectiveSize; // its bytes live on in `to`, counted when it was carved
}
