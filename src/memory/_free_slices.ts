/**
 * The free slices of a best-fit sliced pool, sorted by extent (then older
 * page, then offset), so that a reservation finds the smallest free slice that
 * holds it by binary search. Pages list the slices released since the pool
 * last looked (`Page.freed`); `absorb` merges each with its free neighbours
 * and files the result, looking at no other slice of the page, so that the
 * work of a release does not grow with the number of allocations a page
 * holds. `refresh` merges and files every free slice of a page (to rebuild
 * the index). Most updates move one entry a few places instead of removing
 * and inserting it.
 *
 * @module
 */

import type { Page, Slice } from "../contract/managed_memory.ts";

/** True when `a` sorts before `b`: smaller extent, then older page (lower storage id), then lower offset. */
function before(a: Slice, b: Slice): boolean {
  const ea = a.effectiveSize;
  const eb = b.effectiveSize;
  if (ea !== eb) return ea < eb;
  const pa = a.page.storage.id;
  const pb = b.page.storage.id;
  return pa !== pb ? pa < pb : a.offset < b.offset;
}

/** Free slices by ascending extent; each listed slice has `indexed` set. */
export class FreeSlices {
  #list: Slice[] = [];

  /** Number of listed slices. */
  get length(): number {
    return this.#list.length;
  }

  /**
   * Position of the smallest listed slice of at least `need` bytes (the
   * oldest page's, then the lowest offset, among equals), or -1.
   *
   * @param need Bytes, padding included.
   * @returns The position, for `at` and `replace`.
   */
  bestFit(need: number): number {
    const list = this.#list;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.effectiveSize < need) lo = mid + 1;
      else hi = mid;
    }
    return lo === list.length ? -1 : lo;
  }

  /**
   * Position of the smallest listed slice of at least `need` bytes on a page
   * that `ok` accepts (the order of `bestFit`), or -1.
   *
   * @param need Bytes, padding included.
   * @param ok Accepts a page.
   * @returns The position, for `at` and `replace`.
   */
  bestFitWhere(need: number, ok: (page: Page) => boolean): number {
    const list = this.#list;
    let at = this.bestFit(need);
    if (at < 0) return -1;
    while (at < list.length && !ok(list[at]!.page)) at++;
    return at === list.length ? -1 : at;
  }

  /**
   * The slice at a position.
   *
   * @param at A position from `bestFit`.
   * @returns The slice.
   */
  at(at: number): Slice {
    return this.#list[at]!;
  }

  /**
   * Replaces the slice at `at` (taken for an allocation) with `next`, the
   * free remainder of it, or removes the entry when there is none.
   *
   * @param at A position from `bestFit`.
   * @param next The remainder, or `null`.
   */
  replace(at: number, next: Slice | null): void {
    const list = this.#list;
    list[at]!.indexed = false;
    if (next === null) {
      list.splice(at, 1);
      return;
    }
    list[at] = next;
    next.indexed = true;
    this.#settle(at);
  }

  /**
   * Lists a free slice.
   *
   * @param slice A free slice not listed yet.
   */
  add(slice: Slice): void {
    const list = this.#list;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(list[mid]!, slice)) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, slice);
    slice.indexed = true;
  }

  /** Forgets every slice. */
  clear(): void {
    for (const s of this.#list) s.indexed = false;
    this.#list.length = 0;
  }

  /**
   * Merges each slice of `page` freed since the pool last looked
   * (`page.freed`, emptied here) with its free neighbours, and lists the
   * merged slice in place of a listed member of its run. Looks at the freed
   * slices, their free neighbours and the page's array of slices (to find
   * each freed one), never at the other slices' state.
   *
   * @param page The page.
   * @returns True when the page is now one free slice (entirely free).
   */
  absorb(page: Page): boolean {
    const slices = page.slices;
    for (const s of page.freed) {
      // Listed already (the head of a run merged for an earlier one), or taken again.
      if (s.indexed || !s.isFree()) continue;
      const i = slices.indexOf(s);
      if (i < 0) continue; // merged into an earlier one's run
      let lo = i;
      while (lo > 0 && slices[lo - 1]!.isFree()) lo--;
      let hi = i + 1;
      while (hi < slices.length && slices[hi]!.isFree()) hi++;
      this.#merge(slices, lo, hi);
    }
    page.freed.length = 0;
    return slices.length === 1 && slices[0]!.isFree();
  }

  /**
   * Merges the runs of free slices of `page` and lists every free slice of
   * it: all of its slices are looked at (rebuilding the index; `absorb` is
   * the incremental form).
   *
   * @param page The page.
   */
  refresh(page: Page): void {
    const slices = page.slices;
    for (let i = 0; i < slices.length; i++) {
      if (!slices[i]!.isFree()) continue;
      let j = i + 1;
      while (j < slices.length && slices[j]!.isFree()) j++;
      this.#merge(slices, i, j);
    }
  }

  /**
   * Unlists a listed free slice (of a page given back).
   *
   * @param slice The slice.
   */
  remove(slice: Slice): void {
    this.#remove(slice);
  }

  /**
   * Merges the free slices `[i, j)` of a page into slice `i` and lists it; a
   * merged run takes the place of one of its listed members.
   */
  #merge(slices: Slice[], i: number, j: number): void {
    const s = slices[i]!;
    if (j === i + 1) {
      if (!s.indexed) this.add(s);
      return;
    }
    let slot: Slice | null = null;
    let extent = 0;
    for (let k = i; k < j; k++) {
      const t = slices[k]!;
      extent += t.effectiveSize;
      if (!t.indexed) continue;
      if (slot === null) slot = t;
      else this.#remove(t);
    }
    // Found before the merge changes the extent the slot is listed under.
    const at = slot === null ? -1 : this.#positionOf(slot);
    for (let k = i + 1; k < j; k++) slices[k]!.detach();
    slices.splice(i + 1, j - i - 1);
    s.size = extent;
    s.padding = 0;
    if (at < 0) this.add(s);
    else this.replace(at, s);
  }

  #positionOf(slice: Slice): number {
    const list = this.#list;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(list[mid]!, slice)) lo = mid + 1;
      else hi = mid;
    }
    if (list[lo] !== slice) throw new Error("free-slice index out of order");
    return lo;
  }

  #remove(slice: Slice): void {
    this.#list.splice(this.#positionOf(slice), 1);
    slice.indexed = false;
  }

  /** Moves the entry at `at`, whose extent changed, to its place. */
  #settle(at: number): void {
    const list = this.#list;
    const s = list[at]!;
    let i = at;
    while (i > 0 && before(s, list[i - 1]!)) {
      list[i] = list[i - 1]!;
      i--;
    }
    while (i < list.length - 1 && before(list[i + 1]!, s)) {
      list[i] = list[i + 1]!;
      i++;
    }
    list[i] = s;
  }
}
