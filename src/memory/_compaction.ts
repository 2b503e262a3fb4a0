/**
 * Compaction of a best-fit sliced pool (see `SlicedPoolOptions.compaction`).
 *
 * Handles are indirect, so the pool may move live memory that nothing pins,
 * and pack its pages: a pool that holds a page more than it needs empties its
 * sparsest pages into the others and gives them back, and a reservation that
 * no free slice holds, in a pool that holds what it needs, frees a run of
 * neighbouring slices by moving them instead of making a page.
 *
 * What the pool needs is taken over a window of reservations: the most of its
 * live bytes plus the slack, and of what it had to hold when moving could not
 * make room (a give-back leaves a page on top of that: a pool grows below its
 * need, moves at it, and gives back a page above it). A loop whose quiet phase
 * outlasts the window would give pages back and make them again every round;
 * a page made within the window after a give-back, while the pool holds no
 * more than before it, doubles the window (up to 32 times), so that a steady
 * loop stops creating buffers after a few rounds. The churn of issue 18 pays
 * for that with a longer window too (its figures: `churn_ratio_test.ts`).
 *
 * A negative slack is a lever for tests: the pool then needs nothing, packs
 * whenever its slices fit elsewhere, and learns nothing.
 *
 * @module
 */

import {
  cancel,
  commit,
  type CompactedPool,
  type CompactionStep,
  pageStats,
  type Plan,
  plan,
  runs,
  survey,
} from "./_evacuation.ts";
import type { SliceMover } from "./slice_mover.ts";
import type { Page } from "../contract/managed_memory.ts";

/** How a pool compacts, resolved. */
export interface CompactionPolicy {
  /** Free bytes the pool may hold beyond its live bytes (and one page), as a fraction of them. */
  slack: number;
  /** Most bytes one step or reservation copies. */
  budget: number;
  /** Reservations between two steps, at least. */
  every: number;
  /** Reservations over which the pool's need is taken, at first. */
  window: number;
}

/**
 * Compaction's defaults for a page size: 3% slack, half a page per step, a
 * step every 16 reservations at most.
 *
 * @param pageSize The pool's page size.
 * @returns The defaults.
 */
export function compactionDefaults(pageSize: number): { slack: number; budget: number; every: number } {
  return { slack: 0.03, budget: Math.floor(pageSize / 2), every: 16 };
}

/**
 * A pool's `compaction` field with `compactionDefaults` filling what it leaves out.
 *
 * @param given `true`, or the fields given.
 * @param pageSize The pool's page size.
 * @returns Every field (not validated: `memory_config.ts` checks a configuration's).
 */
export function withCompactionDefaults(
  given: true | { slack?: number; budget?: number; every?: number },
  pageSize: number,
): { slack: number; budget: number; every: number } {
  const d = compactionDefaults(pageSize);
  if (given === true) return d;
  return { slack: given.slack ?? d.slack, budget: given.budget ?? d.budget, every: given.every ?? d.every };
}

/**
 * Pages made within the window after a give-back, while the pool holds no more than before it, that double the
 * window. One: at 4, the churn ends within 1.13x as at 1, but a training-like loop took 12 rounds per doubling.
 */
const REGROWTH_EVENTS = 1;
/** The window grows to at most this many times its first length. */
const WINDOW_GROWTH_MAX = 32;
/** Runs a reservation tries to free before the pool makes a page. */
const MAX_TRIES = 8;
/** A survey costs a walk over every slice: steps come at least this many slices' worth of reservations apart. */
const SLICES_PER_RESERVATION = 32;

/** The compaction of one pool: its policy, what the pool needed lately, and over how long. */
export class Compactor {
  #pool: CompactedPool;
  #policy: CompactionPolicy;
  #window: number;
  /** Needs with their clock: a decreasing run, the window's most first. */
  #needs: { at: number; bytes: number }[] = [];
  #nextStep = 0;
  #gaveBackAt = -Infinity;
  /** Bytes the pool held before the latest give-back. */
  #heldBefore = 0;
  #regrowths = 0;
  /** What compaction did so far. */
  readonly done: CompactionStep = { moves: 0, bytes: 0, pages: 0 };

  /**
   * Creates the compaction of a pool.
   *
   * @param pool The pool.
   * @param policy Its policy.
   */
  constructor(pool: CompactedPool, policy: CompactionPolicy) {
    this.#pool = pool;
    this.#policy = policy;
    this.#window = policy.window;
  }

  /** Reservations over which the pool's need is taken now. */
  get window(): number {
    return this.#window;
  }

  /**
   * Notes the pool's live bytes after a reservation (live bytes grow only
   * there, so the window's peak is exact).
   *
   * @param now The pool's clock.
   * @param live Live bytes of the pool, padding included.
   */
  noteLive(now: number, live: number): void {
    this.#need(now, this.#liveNeed(live));
  }

  /**
   * Notes that the pool made a page. When it then holds more than its need
   * (moving could not make room), what it holds becomes a need; a page made
   * within the window after a give-back, while the pool holds no more than
   * before it, counts towards doubling the window.
   *
   * @param now The pool's clock.
   * @param reserved Bytes of the pool's pages, the new one included.
   * @param live Live bytes of the pool, padding included.
   */
  pageMade(now: number, reserved: number, live: number): void {
    if (this.#policy.slack < 0) return; // packs whenever it can: no need is remembered, nothing is learnt
    if (reserved > this.#need(now, this.#liveNeed(live))) this.#need(now, reserved);
    if (now - this.#gaveBackAt > this.#window || reserved > this.#heldBefore) return;
    if (++this.#regrowths < REGROWTH_EVENTS) return;
    this.#regrowths = 0;
    this.#window = Math.min(2 * this.#window, WINDOW_GROWTH_MAX * this.#policy.window);
  }

  /** What live bytes need: the slack on top. */
  #liveNeed(live: number): number {
    return live * (1 + this.#policy.slack);
  }

  /** Records a need and returns the window's most (nothing, for a pool that packs whenever it can). */
  #need(now: number, bytes: number): number {
    if (this.#policy.slack < 0) return 0;
    const needs = this.#needs;
    while (needs.length > 0 && needs[needs.length - 1]!.bytes <= bytes) needs.pop();
    needs.push({ at: now, bytes });
    while (needs[0]!.at < now - this.#window) needs.shift();
    return needs[0]!.bytes;
  }

  /**
   * Makes room for a reservation that no free slice holds, instead of a new
   * page, when the pool already holds its need: frees the run of
   * neighbouring slices of some page that spans `need` bytes with the fewest
   * live bytes in it, moving those into free slices of other pages (within
   * the budget).
   *
   * @param now The pool's clock.
   * @param need Bytes the reservation takes.
   * @param mover Copies in the owning stream's order.
   * @returns What it moved, or null when the pool may grow or no run could be freed.
   */
  makeRoom(now: number, need: number, mover: SliceMover): CompactionStep | null {
    const pool = this.#pool;
    const reserved = pool.pages().length * pool.pageSize;
    if (reserved + pool.pageSize <= this.#need(now, this.#liveNeed(pool.live()))) return null;
    pool.refresh();
    let p: Plan | null = null;
    let tries = 0;
    for (const run of runs(pool, need, this.#policy.budget, mover)) {
      p = plan(pool, run.page, run.slices, mover);
      if (p !== null || ++tries === MAX_TRIES) break;
    }
    if (p === null) return null;
    // The places are reserved: the stream's submit (and the cleanup after it) cannot take them.
    if (!mover.begin()) {
      cancel(p);
      return null;
    }
    commit(p, mover);
    mover.end();
    const done = { moves: p.from.length, bytes: p.bytes, pages: 0 };
    this.#count(done);
    return done;
  }

  /**
   * Runs a step, when one is due: when the pool holds a page more than its
   * need, empties its sparsest movable pages into the others (within the
   * budget) and gives them back.
   *
   * @param now The pool's clock.
   * @param mover Copies in the owning stream's order.
   * @returns What it moved and gave back, or null when no step was due.
   */
  step(now: number, mover: SliceMover): CompactionStep | null {
    if (now < this.#nextStep) return null;
    this.#nextStep = now + this.#policy.every;
    const pool = this.#pool;
    const done: CompactionStep = { moves: 0, bytes: 0, pages: 0 };
    const need = this.#need(now, this.#liveNeed(pool.live()));
    const held = pool.pages().length * pool.pageSize;
    let reserved = held;
    if (reserved - pool.pageSize < need) return done;
    const { stats } = survey(pool);
    // A survey walks every slice: the next step waits for that many slices' worth of reservations.
    let slices = 0;
    for (const st of stats) slices += st.page.slices.length;
    this.#nextStep = now + Math.max(this.#policy.every, Math.ceil(slices / SLICES_PER_RESERVATION));
    // The sparsest pages first, while the pool holds a page more than it needs and the budget lasts; each
    // page's slices get their places before anything is copied.
    stats.sort((a, b) => a.live - b.live);
    let budget = this.#policy.budget;
    const plans: Plan[] = [];
    const emptied = new Set<Page>();
    for (const victim of stats) {
      if (reserved - pool.pageSize < need) break;
      // Places reserved for earlier pages may have filled this one: its figures now.
      if (emptied.size > 0) Object.assign(victim, pageStats(victim.page));
      if (victim.live > budget || !victim.movable) continue;
      if (victim.live > 0) {
        if (!mover.canUse(victim.page)) continue;
        const p = plan(pool, victim.page, victim.page.slices.filter((s) => !s.isFree()), mover, emptied);
        if (p === null) continue;
        plans.push(p);
        budget -= p.bytes;
      }
      emptied.add(victim.page);
      reserved -= victim.page.storage.size;
    }
    if (emptied.size === 0) return done;
    if (plans.length > 0) {
      if (!mover.begin()) {
        for (const p of plans) cancel(p);
        return done;
      }
      for (const p of plans) {
        commit(p, mover);
        done.moves += p.from.length;
        done.bytes += p.bytes;
      }
      mover.end();
    }
    for (const page of emptied) if (pool.giveBack(page)) done.pages++;
    this.#gaveBackAt = now;
    this.#heldBefore = held;
    this.#count(done);
    return done;
  }

  #count(step: CompactionStep): void {
    this.done.moves += step.moves;
    this.done.bytes += step.bytes;
    this.done.pages += step.pages;
  }
}
