/**
 * The adaptive strategy (CubeCL's default, section 8.5 step 6) for one batch
 * of candidates, measured in rounds through a `TuneMeasurer` and made fair to
 * the order candidates run in:
 *
 * - round 0: every candidate runs once as a warm-up (which compiles it and
 *   takes what a first run after a device wait costs), then every candidate
 *   once measured;
 * - rounds 1 … maxSamples−1: a pilot run of the fastest candidate so far
 *   (not measured: it takes the first-run cost of the round), then one sample
 *   of every live candidate, in an order that changes every round
 *   (`roundOrder`, in `round_order.ts`): every n rounds each candidate takes
 *   each place once, and over 2n rounds any two stand at each pair of places
 *   as often one way as the other, so what a place in a round costs (the
 *   first run slower, a clock ramping up) falls on every candidate alike;
 * - candidates are compared with the leader (the lowest median) by the rank
 *   test of `noise.ts`: a candidate is slower beyond noise when its samples
 *   are larger than the leader's times 1 + tieBand (3%) at p ≤ 0.1%;
 * - from minSamples (5) rounds on, a candidate slower than the speed factor
 *   (1.5) × the leader at p ≤ 1% is eliminated, slowest first, keeping at
 *   least 2 survivors;
 * - it stops when one live candidate remains, when every
 *   other live candidate is slower than the leader beyond noise or surely
 *   tied with it (within the tie band both ways beyond noise; both take 7
 *   rounds), when a candidate is confirmed under the set's bounds (short
 *   circuit), or after maxSamples (20) rounds;
 * - the winner is the earliest surviving candidate, in the set's order, that
 *   is not slower than the leader beyond noise: when the measurements cannot
 *   tell candidates apart, the earliest wins, so processes agree.
 *
 * A batch therefore takes 7 rounds when its candidates are clearly apart or
 * clearly tied (timestamps with little noise), up to 20 when noise hides what
 * separates them (the software adapter), 5 when eliminations leave one: a
 * round costs one device wait. On a noisy device a faster later candidate
 * can lose to an earlier one: list candidates in the order to prefer.
 *
 * Departures from CubeCL, for Deno: round 0 is one round for all candidates
 * (CubeCL resolves each first sample at once, a device wait per candidate, so
 * that a short circuit can skip compiling the rest); the pilot, the changing
 * order and the rank test (CubeCL measures in a fixed order, eliminates by
 * best times and picks the lowest score); a candidate failing at any point is
 * dropped with its reason, and a sample (or an unsettled run) past the time
 * limit drops it too.
 *
 * @module
 */

import type { RunOutcome, TuneMeasurer } from "./measurer.ts";
import { describeError } from "../_util/describe.ts";
import { ELIMINATION_LEVEL, slowerBeyondNoise, surelyTied } from "./noise.ts";
import { roundOrder } from "./round_order.ts";
import { SampleSet } from "./sample_set.ts";

/** Knobs of the adaptive strategy (CubeCL's `autotune.bench`, plus the tie band). */
export interface BenchConfig {
  /** Rounds before eliminations start (5 is the fewest at which the rank test reaches 1%). @default 5 */
  readonly minSamples: number;
  /**
   * Samples per candidate at most (round 0's included): the most rounds of a
   * batch, reached when noise hides what separates candidates. @default 20
   */
  readonly maxSamples: number;
  /** Samples under the bounds' limit that confirm a short circuit. @default 2 */
  readonly shortCircuitSamples: number;
  /** A candidate slower than the leader by this factor, beyond noise (p ≤ 1%), is eliminated. @default 1.5 */
  readonly speedFactor: number;
  /** Candidates never eliminated below this count. @default 2 */
  readonly minSurvivors: number;
  /**
   * A later candidate wins over an earlier one only when the earlier one is
   * slower than it by more than this fraction, beyond noise (p ≤ 0.1%);
   * otherwise the earlier one wins. @default 0.03
   */
  readonly tieBand: number;
}

/** The defaults of {@linkcode BenchConfig}. */
export const DEFAULT_BENCH: BenchConfig = Object.freeze({
  minSamples: 5,
  maxSamples: 20,
  shortCircuitSamples: 2,
  speedFactor: 1.5,
  minSurvivors: 2,
  tieBand: 0.03,
});

/** What became of one candidate of a batch. */
export type CandidateStatus = "measured" | "eliminated" | "failed" | "unmeasured";

/** One candidate's result in a batch. */
export interface CandidateRecord {
  /** Index in the set. */
  readonly index: number;
  /** Name. */
  readonly name: string;
  /** Outcome. */
  readonly status: CandidateStatus;
  /** Its samples, in nanoseconds. */
  readonly samples: readonly number[];
  /** Its score (measured or eliminated). */
  readonly score?: number;
  /** Why it failed, was eliminated or was not measured. */
  readonly reason?: string;
  /** The error of a failure. */
  readonly error?: unknown;
}

/** The result of a batch. */
export interface BatchResult {
  /** Every candidate of the batch, in batch order. */
  readonly records: readonly CandidateRecord[];
  /** The winner's index in the set, or undefined when no candidate was measured. */
  readonly winner: number | undefined;
  /** True when the winner was confirmed under the bounds' limit. */
  readonly shortCircuit: boolean;
  /** Rounds taken (device waits, when the measurer costs one per round). */
  readonly rounds: number;
}

/** What a batch needs. */
export interface BatchArgs {
  /** Candidate indices in the set, in plan order. */
  readonly indices: readonly number[];
  /** Every candidate's name, by index in the set. */
  readonly names: readonly string[];
  /** A run of candidate `index` on the benchmark input. */
  readonly run: (index: number) => unknown;
  /** The measurer. */
  readonly measurer: TuneMeasurer;
  /** Strategy knobs. */
  readonly config: BenchConfig;
  /** Short-circuit limit in nanoseconds, if any. */
  readonly limitNanos?: number;
  /** A sample (or a run not settled) past this many milliseconds drops the candidate. */
  readonly timeLimitMs: number;
  /** Cancellation. */
  readonly signal?: AbortSignal;
  /** Called after each round with the candidates still live. */
  readonly onRound?: (round: number, live: readonly number[]) => void;
}

class Candidate {
  readonly samples: SampleSet = new SampleSet();
  live = true;
  status: CandidateStatus = "measured";
  reason: string | undefined;
  error: unknown;

  constructor(readonly index: number, readonly name: string) {}

  drop(status: CandidateStatus, reason: string, error?: unknown): void {
    this.live = false;
    this.status = status;
    this.reason = reason;
    this.error = error;
  }

  record(): CandidateRecord {
    const base = { index: this.index, name: this.name, status: this.status, samples: [...this.samples.all] };
    const score = this.status === "measured" || this.status === "eliminated" ? this.samples.score() : undefined;
    return {
      ...base,
      ...(score !== undefined ? { score } : {}),
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
      ...(this.error !== undefined ? { error: this.error } : {}),
    };
  }
}

/** Makes a run fail when its promise does not settle within `ms`. */
function withDeadline(run: () => unknown, ms: number): () => unknown {
  return () => {
    const r = run();
    if (r === null || typeof (r as { then?: unknown })?.then !== "function") return r;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the run did not settle within the time limit of ${ms} ms`)), ms);
    });
    return Promise.race([r as Promise<unknown>, late]).finally(() => clearTimeout(timer));
  };
}

const ms = (nanos: number) => `${(nanos / 1e6).toFixed(3)} ms`;

/**
 * Measures one batch with the adaptive strategy.
 *
 * @param args The batch, the measurer and the knobs.
 * @returns Every candidate's record and the winner.
 * @throws The signal's reason when it aborts.
 */
export async function measureBatch(args: BatchArgs): Promise<BatchResult> {
  const { config, measurer, signal } = args;
  const limitNanos = args.timeLimitMs * 1e6;
  const all = args.indices.map((i) => new Candidate(i, args.names[i]!)).sort((a, b) => a.index - b.index);
  const runOf = (c: Candidate) => withDeadline(() => args.run(c.index), args.timeLimitMs);
  const take = (c: Candidate, o: RunOutcome, warmup: boolean): void => {
    if (!c.live) return;
    if (o.kind === "failure") return c.drop("failed", describeError(o.error), o.error);
    if (o.kind === "unmeasured") {
      if (!warmup) c.drop("unmeasured", o.reason);
      return;
    }
    if (o.nanos > limitNanos) {
      return c.drop("failed", `ran past the time limit of ${args.timeLimitMs} ms (measured ${ms(o.nanos)})`);
    }
    if (!warmup) c.samples.push(o.nanos);
  };

  // Round 0: every candidate's warm-up, then every candidate's first sample. A candidate whose warm-up throws is
  // not called again (its sample run throws at once).
  signal?.throwIfAborted();
  const threw = new Set<Candidate>();
  const warmups = all.map((c) => async () => {
    try {
      return await runOf(c)();
    } catch (e) {
      threw.add(c);
      throw e;
    }
  });
  const firsts = all.map((c) => () => threw.has(c) ? Promise.reject(new Error("its warm-up failed")) : runOf(c)());
  const first = await measurer.round([...warmups, ...firsts], { signal });
  all.forEach((c, k) => take(c, first[k]!, true));
  all.forEach((c, k) => take(c, first[all.length + k]!, false));
  let rounds = 1;
  const live = () => all.filter((c) => c.live);
  args.onRound?.(0, live().map((c) => c.index));
  let confirmed = shortCircuit(all, args.limitNanos, config);

  // Every live candidate takes one sample a round: live candidates have as many samples, from the same rounds.
  for (let round = 1; round < config.maxSamples && confirmed === undefined; round++) {
    const alive = live();
    if (alive.length <= 1) break; // nothing left to compare
    signal?.throwIfAborted();
    const pilot = leaderOf(alive)!;
    const order = roundOrder(alive, round);
    const outcomes = await measurer.round([runOf(pilot), ...order.map(runOf)], { signal });
    rounds++;
    take(pilot, outcomes[0]!, true);
    order.forEach((c, k) => take(c, outcomes[k + 1]!, false));
    confirmed = shortCircuit(all, args.limitNanos, config);
    if (confirmed === undefined && round + 1 >= config.minSamples) {
      eliminate(live(), config);
      const rest = live();
      if (rest.length > 0 && isSettled(rest, config.tieBand)) {
        args.onRound?.(round, rest.map((c) => c.index));
        break;
      }
    }
    args.onRound?.(round, live().map((c) => c.index));
  }

  const winner = confirmed ?? pickWinner(live(), config.tieBand);
  return { records: all.map((c) => c.record()), winner: winner?.index, shortCircuit: confirmed !== undefined, rounds };
}

/** What {@linkcode checkCandidate} needs. */
export interface CheckArgs {
  /** The candidate's index in the set. */
  readonly index: number;
  /** Its name. */
  readonly name: string;
  /** A run of it on the benchmark input. */
  readonly run: () => unknown;
  /** The measurer. */
  readonly measurer: TuneMeasurer;
  /** A sample (or a run not settled) past this many milliseconds fails the check. */
  readonly timeLimitMs: number;
  /** Cancellation. */
  readonly signal?: AbortSignal;
}

/**
 * Checks a lone candidate (a set's only one) with one run in one round: the
 * round pins on it what its work queued on the device (a compilation or
 * validation error), which a launch alone would leave for the next read.
 *
 * @param args The candidate, the measurer and the time limit.
 * @returns Its record: `measured` (one sample), `unmeasured` (it ran) or `failed`.
 * @throws The signal's reason when it aborts.
 */
export async function checkCandidate(args: CheckArgs): Promise<CandidateRecord> {
  args.signal?.throwIfAborted();
  const [o] = await args.measurer.round([withDeadline(args.run, args.timeLimitMs)], { signal: args.signal });
  const base = { index: args.index, name: args.name };
  if (o === undefined) return { ...base, status: "failed", samples: [], reason: "the measurer reported nothing" };
  if (o.kind === "failure") {
    return { ...base, status: "failed", samples: [], reason: describeError(o.error), error: o.error };
  }
  if (o.kind === "unmeasured") return { ...base, status: "unmeasured", samples: [], reason: o.reason };
  if (o.nanos > args.timeLimitMs * 1e6) {
    const reason = `ran past the time limit of ${args.timeLimitMs} ms (measured ${ms(o.nanos)})`;
    return { ...base, status: "failed", samples: [o.nanos], reason };
  }
  return { ...base, status: "measured", samples: [o.nanos], score: o.nanos };
}

function shortCircuit(
  all: readonly Candidate[],
  limit: number | undefined,
  config: BenchConfig,
): Candidate | undefined {
  if (limit === undefined) return undefined;
  return all.find((c) => c.live && c.samples.confirmedUnder(limit, config.shortCircuitSamples));
}

/** The live candidate with the lowest median (the earliest of equal ones), if any has samples. */
function leaderOf(live: readonly Candidate[]): Candidate | undefined {
  let leader: Candidate | undefined;
  for (const c of live) {
    const s = c.samples.score();
    if (s !== undefined && (leader === undefined || s < leader.samples.score()!)) leader = c;
  }
  return leader;
}

/** Drops the candidates slower than the speed factor × the leader beyond noise (p ≤ 1%), slowest first. */
function eliminate(live: readonly Candidate[], config: BenchConfig): void {
  const leader = leaderOf(live);
  const budget = live.length - config.minSurvivors;
  if (leader === undefined || budget <= 0) return;
  const slow = live
    .filter((c) =>
      c !== leader &&
      slowerBeyondNoise(c.samples.all, leader.samples.all, config.speedFactor, ELIMINATION_LEVEL)
    )
    .sort((a, b) => b.samples.score()! - a.samples.score()!)
    .slice(0, budget);
  for (const c of slow) {
    c.drop(
      "eliminated",
      `slower than ${config.speedFactor}× "${leader.name}" beyond noise (median ${ms(c.samples.score()!)} against ${
        ms(leader.samples.score()!)
      })`,
    );
  }
}

/** Whether more rounds could not change the decision: every other candidate is slower beyond noise or surely tied. */
function isSettled(live: readonly Candidate[], band: number): boolean {
  const leader = leaderOf(live);
  if (leader === undefined) return true;
  return live.every((c) =>
    c === leader || slowerBeyondNoise(c.samples.all, leader.samples.all, 1 + band) ||
    surelyTied(c.samples.all, leader.samples.all, band)
  );
}

/**
 * The winner: the earliest candidate in the set's order that is not slower
 * than the leader by more than the tie band beyond noise (the leader itself
 * when none before it is).
 */
function pickWinner(live: readonly Candidate[], band: number): Candidate | undefined {
  const leader = leaderOf(live);
  if (leader === undefined) return undefined;
  return live
    .filter((c) => c.samples.length > 0)
    .sort((a, b) => a.index - b.index)
    .find((c) => c === leader || !slowerBeyondNoise(c.samples.all, leader.samples.all, 1 + band));
}

/**
 * Checks strategy knobs.
 *
 * @param b The knobs.
 * @returns Them, frozen.
 * @throws {RangeError} Naming the first knob out of range.
 */
export function checkBenchConfig(b: BenchConfig): BenchConfig {
  const int = (k: keyof BenchConfig, min: number) => {
    if (!Number.isInteger(b[k]) || b[k] < min) throw new RangeError(`Tuner: bench.${k} must be an integer ≥ ${min}`);
  };
  int("minSamples", 1);
  int("maxSamples", b.minSamples);
  int("shortCircuitSamples", 1);
  int("minSurvivors", 1);
  for (const k of ["speedFactor", "tieBand"] as const) {
    if (!(b[k] >= 0) || !Number.isFinite(b[k])) throw new RangeError(`Tuner: bench.${k} must be a finite number ≥ 0`);
  }
  if (b.speedFactor < 1) throw new RangeError("Tuner: bench.speedFactor must be ≥ 1");
  return Object.freeze({ ...b });
}
