/**
 * `defineTunableSet`: the candidates of one operation, how to key its inputs,
 * and how to plan their measurement (CubeCL's `TunableSet`, section 8.4).
 *
 * @module
 */

import { hash64 } from "./_hash.ts";
import { describe } from "../_util/describe.ts";

/** A value that survives `JSON.stringify` / `JSON.parse` unchanged: what a key may be. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** A priority: a number, or a function of the key. Higher runs first; negative skips. */
export type Priority<K> = number | ((key: K) => number);

/** One candidate implementation of a tunable operation. */
export interface TuneCandidate<In, Out, K> {
  /** Unique within the set; names the persisted winner and enters the checksum. */
  readonly name: string;
  /**
   * Runs the operation on `input` (launching its kernels) and returns its
   * output. While tuning it runs on the benchmark inputs, and its output is
   * dropped; a throw or rejection drops the candidate for the key.
   */
  readonly run: (input: In) => Out | Promise<Out>;
  /** The group(s) it belongs to; a candidate without a group is in the first batch. */
  readonly group?: string | readonly string[];
  /**
   * Its priority within each of its groups: each distinct level is one batch,
   * highest first. A negative priority skips it for that key (also without a
   * group: use it for shapes a candidate does not support). @default 0
   */
  readonly priority?: Priority<K>;
  /**
   * What the candidate runs, for example its kernels' WGSL: part of the
   * checksum, so that editing it invalidates persisted decisions.
   */
  readonly source?: string;
}

/** What a set's `bounds` says about a key. */
export interface TuneBounds {
  /**
   * Good enough: a candidate measured at or under this many nanoseconds in
   * two samples wins at once, and the batch stops (CubeCL's short circuit).
   */
  readonly limitNanos: number;
}

/** Options of {@linkcode defineTunableSet}. */
export interface TunableSetOptions<In, Out, K extends JsonValue> {
  /** Names the set in persisted keys, logs and errors. */
  readonly name: string;
  /**
   * The key of an input: inputs with equal keys share one decision. Anchor
   * sizes (see `anchor`) so that nearby shapes share it. It must be JSON.
   */
  readonly key: (input: In) => K;
  /** The candidates, in their fixed order (ties between near-equal timings go to the earlier one). */
  readonly candidates: readonly TuneCandidate<In, Out, K>[];
  /** Priority of each group named by a candidate (missing groups have priority 0). */
  readonly groups?: Readonly<Record<string, Priority<K>>>;
  /**
   * The inputs to measure on, from the caller's input and its key (CubeCL's
   * input generator). Default: the caller's input itself; give fresh copies
   * when a candidate writes into its input.
   */
  readonly inputs?: (input: In, key: K) => In | Promise<In>;
  /** A good-enough time for a key (see {@linkcode TuneBounds}); none by default. */
  readonly bounds?: (input: In, key: K) => TuneBounds | undefined;
}

/**
 * A set of candidates for one operation. Create it once with
 * {@linkcode defineTunableSet} and tune it any number of times.
 */
export class TunableSet<In, Out, K extends JsonValue = JsonValue> {
  /** The set's name. */
  readonly name: string;
  /** The key function. */
  readonly key: (input: In) => K;
  /** The candidates, frozen. */
  readonly candidates: readonly TuneCandidate<In, Out, K>[];
  /** Group priorities. */
  readonly groups: Readonly<Record<string, Priority<K>>>;
  /** The benchmark input generator, if any. */
  readonly inputs: ((input: In, key: K) => In | Promise<In>) | undefined;
  /** The bounds generator, if any. */
  readonly bounds: ((input: In, key: K) => TuneBounds | undefined) | undefined;
  /**
   * Hash of the candidates' names and sources, in order: a persisted decision
   * is used only while it matches.
   */
  readonly checksum: string;

  /**
   * Internal: use {@linkcode defineTunableSet}.
   *
   * @param options Validated options.
   */
  constructor(options: TunableSetOptions<In, Out, K>) {
    this.name = options.name;
    this.key = options.key;
    this.candidates = Object.freeze(options.candidates.map((c) => Object.freeze({ ...c })));
    this.groups = Object.freeze({ ...options.groups });
    this.inputs = options.inputs;
    this.bounds = options.bounds;
    this.checksum = hash64(
      JSON.stringify(this.candidates.map((c) => [c.name, c.source ?? null])),
    );
  }

  /**
   * The groups a candidate belongs to.
   *
   * @param index The candidate's index.
   * @returns Its group names (empty without a group).
   */
  groupsOf(index: number): readonly string[] {
    const g = this.candidates[index]?.group;
    return g === undefined ? [] : typeof g === "string" ? [g] : g;
  }
}

function evaluate<K>(p: Priority<K> | undefined, key: K, what: string): number {
  const v = typeof p === "function" ? p(key) : p ?? 0;
  if (typeof v !== "number" || Number.isNaN(v)) {
    throw new TypeError(`${what}: priority must be a number, got ${describe(v)}`);
  }
  return v;
}

/**
 * The priority of candidate `index` for `key`.
 *
 * @param set The set.
 * @param index The candidate's index.
 * @param key The key.
 * @returns Its priority (0 when none was given).
 * @throws {TypeError} When a priority function returns something other than a number.
 */
export function candidatePriority<In, Out, K extends JsonValue>(
  set: TunableSet<In, Out, K>,
  index: number,
  key: K,
): number {
  const c = set.candidates[index]!;
  return evaluate(c.priority, key, `tunable set "${set.name}", candidate "${c.name}"`);
}

/**
 * The priority of group `name` for `key`.
 *
 * @param set The set.
 * @param name The group.
 * @param key The key.
 * @returns Its priority (0 for a group without one).
 * @throws {TypeError} When a priority function returns something other than a number.
 */
export function groupPriority<In, Out, K extends JsonValue>(
  set: TunableSet<In, Out, K>,
  name: string,
  key: K,
): number {
  return evaluate(set.groups[name], key, `tunable set "${set.name}", group "${name}"`);
}

/**
 * Defines a set of candidates for one operation.
 *
 * @example Two candidates, one only for aligned sizes
 * ```ts
 * import { anchor, defineTunableSet } from "@denogpu/runtime";
 *
 * const set = defineTunableSet({
 *   name: "scale",
 *   key: (xs: Float32Array) => ({ n: anchor(xs.length), aligned: xs.length % 4 === 0 }),
 *   candidates: [
 *     { name: "scalar", run: (xs: Float32Array) => xs.map((x) => 2 * x) },
 *     { name: "by4", run: (xs: Float32Array) => xs.map((x) => x + x), priority: (k) => k.aligned ? 0 : -1 },
 *   ],
 * });
 * console.log(set.candidates.length, set.checksum.length); // 2 16
 * ```
 *
 * @param options Name, key function, candidates, and optional groups, inputs and bounds.
 * @returns The set.
 * @throws {TypeError} When the name is empty, `key` is not a function, there
 * are no candidates, a candidate has no name or `run`, two share a name, or a
 * `group`, `priority` or `source` has the wrong type.
 */
export function defineTunableSet<In, Out, K extends JsonValue>(
  options: TunableSetOptions<In, Out, K>,
): TunableSet<In, Out, K> {
  if (options === null || typeof options !== "object") {
    throw new TypeError("defineTunableSet: options must be an object { name, key, candidates }");
  }
  const { name, key, candidates } = options;
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`defineTunableSet: name must be a non-empty string, got ${JSON.stringify(name)}`);
  }
  const where = `defineTunableSet("${name}")`;
  if (typeof key !== "function") throw new TypeError(`${where}: key must be a function of the input`);
  if (!Array.isArray(candidates) || candidates.length === 0) {
    throw new TypeError(`${where}: candidates must be a non-empty array`);
  }
  const seen = new Set<string>();
  candidates.forEach((c, i) => {
    if (c === null || typeof c !== "object") throw new TypeError(`${where}: candidate ${i} must be an object`);
    if (typeof c.name !== "string" || c.name.length === 0) {
      throw new TypeError(`${where}: candidate ${i} needs a non-empty name`);
    }
    if (seen.has(c.name)) throw new TypeError(`${where}: two candidates are named "${c.name}"; names must be unique`);
    seen.add(c.name);
    if (typeof c.run !== "function") throw new TypeError(`${where}: candidate "${c.name}" needs a run function`);
    const groups = c.group === undefined ? [] : typeof c.group === "string" ? [c.group] : c.group;
    if (!Array.isArray(groups) || groups.some((g) => typeof g !== "string")) {
      throw new TypeError(`${where}: candidate "${c.name}": group must be a string or an array of strings`);
    }
    if (c.priority !== undefined && typeof c.priority !== "number" && typeof c.priority !== "function") {
      throw new TypeError(`${where}: candidate "${c.name}": priority must be a number or a function of the key`);
    }
    if (c.source !== undefined && typeof c.source !== "string") {
      throw new TypeError(`${where}: candidate "${c.name}": source must be a string`);
    }
  });
  for (const f of ["inputs", "bounds"] as const) {
    if (options[f] !== undefined && typeof options[f] !== "function") {
      throw new TypeError(`${where}: ${f} must be a function`);
    }
  }
  return new TunableSet(options);
}
