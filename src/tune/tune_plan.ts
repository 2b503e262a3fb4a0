/**
 * `TunePlan`: the order in which a set's candidates are measured for a key,
 * as batches (CubeCL's `TunePlan`, section 8.4).
 *
 * - Candidates without a group form the first batch, together with the first
 *   group batch.
 * - Groups are visited by descending group priority (groups of equal priority
 *   merge); within them, candidates by descending priority, one batch per
 *   distinct level.
 * - A negative priority (of a group or of a candidate) skips it, and a
 *   candidate visited once (returned or skipped) is never returned again.
 * - `next()` keeps yielding batches until none is left, then returns `[]`;
 *   the tuner stops asking once a batch produced a measurement.
 *
 * @module
 */

/** One candidate as the plan sees it: its groups with their priorities for the key. */
export interface PlanEntry {
  /** Group name → [group priority, the candidate's priority within it]; empty without groups. */
  readonly groups: ReadonlyMap<string, readonly [number, number]>;
  /** The candidate's own priority (used only without groups: negative skips it). */
  readonly priority: number;
}

interface Level {
  readonly group: number;
  readonly within: number;
  readonly indices: number[];
}

/**
 * The batches of a tuning run, computed from each candidate's groups and
 * priorities for one key.
 *
 * @example The §8.4 test vector
 * ```ts
 * import { TunePlan } from "./tune_plan.ts";
 * const g = (group: string, p: number, within: number) => new Map([[group, [p, within] as const]]);
 * const plan = new TunePlan([
 *   { groups: new Map(), priority: 0 },
 *   { groups: g("g0", 2, 1), priority: 0 },
 *   { groups: g("g0", 2, 2), priority: 0 },
 *   { groups: g("g1", 1, 2), priority: 0 },
 * ]);
 * console.log(plan.next(), plan.next(), plan.next(), plan.next()); // [0, 2] [1] [3] []
 * ```
 */
export class TunePlan {
  #ungrouped: number[];
  #skipped: number[] = [];
  #levels: Level[];
  #visited = new Set<number>();
  #first = true;

  /**
   * Builds the plan.
   *
   * @param entries Each candidate's groups and priorities, in candidate order.
   */
  constructor(entries: readonly PlanEntry[]) {
    this.#ungrouped = [];
    const levels = new Map<string, Level>();
    entries.forEach((e, i) => {
      if (e.groups.size === 0) {
        if (e.priority < 0) this.#skipped.push(i);
        else this.#ungrouped.push(i);
        return;
      }
      for (const [group, within] of e.groups.values()) {
        const id = `${group}\u0000${within}`;
        let level = levels.get(id);
        if (level === undefined) levels.set(id, level = { group, within, indices: [] });
        if (!level.indices.includes(i)) level.indices.push(i);
      }
    });
    this.#levels = [...levels.values()].sort((a, b) => b.group - a.group || b.within - a.within);
    for (const l of this.#levels) l.indices.sort((a, b) => a - b);
  }

  /** Candidates never measured because of a negative priority (known once `next()` returned `[]`). */
  get skipped(): readonly number[] {
    return this.#skipped;
  }

  /**
   * The next batch of candidate indices: the ungrouped candidates first (in
   * the first batch only), then the level's, each in candidate order.
   *
   * @returns The batch, or `[]` when the plan is exhausted.
   */
  next(): number[] {
    const batch = this.#first ? [...this.#ungrouped] : [];
    this.#first = false;
    for (const i of batch) this.#visited.add(i);
    while (this.#levels.length > 0) {
      const level = this.#levels.shift()!;
      const fresh = level.indices.filter((i) => !this.#visited.has(i));
      for (const i of fresh) this.#visited.add(i);
      if (level.group < 0 || level.within < 0) {
        for (const i of fresh) this.#skipped.push(i);
        if (batch.length > 0) return batch;
        continue;
      }
      batch.push(...fresh);
      if (batch.length > 0) return batch;
    }
    return batch;
  }
}
