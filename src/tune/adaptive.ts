/**
 * The adaptive strategy (CubeCL's default, section 8.5 step 6) for one batch
 * of candidates, measured in rounds through a `TuneMeasurer`:
 *
 * - round 0: each candidate runs once as a warm-up (which compiles it) and
 *   once measured;
 * - rounds 1 … maxSamples−1: every live candidate takes one sample;
 * - from minSamples samples on, candidates whose best time exceeds the best
 *   candidate's by the speed factor (1.5) are eliminated, slowest first,
 *   keeping at least 2 survivors; the first sample is left out of a
 *   candidate's best once it has 3;
 * - it stops when one live candidate remains (after minSamples), when every
 *   live candidate has converged (best improved by < 2% for 2 samples), or
 *   when a candidate is confirmed under the set's bounds (short circuit);
 * - the winner is the surviving candidate with the lowest score
 *   (0.8·min + 0.2·median); survivors within the tie band (3%) of it go to
 *   the earliest in candidate order, so processes that measure nearly equal
 *   times agree.
 *
 * Departures from CubeCL, for Deno: round 0 is one round for all candidates
 * (CubeCL resolves each first sample at once, a device wait per candidate, so
 * that a short circuit can skip compiling the rest); a candidate failing at
 * any point is dropped with its reason, and a sample (or an unsettled run)
 * past the time limit drops it too.
 *
 * @module
 */

import { describeError, type RunOutcome, type TuneMeasurer } from "./measurer.ts";
import { SampleSet } from "./sample_set.ts";

/** Knobs of the adaptive strategy (CubeCL's `autotune.bench`, plus the tie band). */
export interface BenchConfig {
  /** Samples before elimination starts, and before a lone survivor stops the batch. @default 3 */
  readonly minSamples: number;
  /** Samples per candidate at most (round 0's included). @default 10 */
  readonly maxSamples: number;
  /** Samples under the bounds' limit that confirm a short circuit. @default 2 */
  readonly shortCircuitSamples: number;
  /** A candidate whose best exceeds the best one's by this factor is eliminated. @default 1.5 */
  readonly speedFactor: number;
  /** Candidates never eliminated below this count. @default 2 */
  readonly minSurvivors: number;
  /** Relative gain of the best below which a sample is no progress. @default 0.02 */
  readonly convergence: number;
  /** Samples without progress that mean convergence. @default 2 */
  readonly convergenceRounds: number;
  /** Scores within this fraction of the best tie; the earliest candidate wins a tie. @default 0.03 */
  readonly tieBand: number;
}

/** The defaults of {@linkcode BenchConfig}. */
export const DEFAULT_BENCH: BenchConfig = Object.freeze({
  minSamples: 3,
  maxSamples: 10,
  shortCircuitSamples: 2,
  speedFactor: 1.5,
  minSurvivors: 2,
  convergence: 0.02,
  convergenceRounds: 2,
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
  readonly samples: SampleSet;
  live = true;
  status: CandidateStatus = "measured";
  reason: string | undefined;
  error: unknown;

  constructor(readonly index: number, readonly name: string, config: BenchConfig) {
    this.samples = new SampleSet(config.convergence, config.convergenceRounds);
  }

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
  const all = args.indices.map((i) => new Candidate(i, args.names[i]!, config));
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

  // Round 0: a warm-up and a sample per candidate, in one round. A candidate
  // whose warm-up throws is not called again (its sample run throws at once).
  signal?.throwIfAborted();
  const threw = new Set<Candidate>();
  const first = await measurer.round(
    all.flatMap((c) => {
      const run = runOf(c);
      const warmup = async () => {
        try {
          return await run();
        } catch (e) {
          threw.add(c);
          throw e;
        }
      };
      const sample = () => threw.has(c) ? Promise.reject(new Error("its warm-up failed")) : run();
      return [warmup, sample];
    }),
    { signal },
  );
  all.forEach((c, k) => {
    take(c, first[2 * k]!, true);
    take(c, first[2 * k + 1]!, false);
  });
  let rounds = 1;
  const live = () => all.filter((c) => c.live);
  args.onRound?.(0, live().map((c) => c.index));
  let confirmed = shortCircuit(all, args.limitNanos, config);

  for (let round = 1; round < config.maxSamples && confirmed === undefined; round++) {
    const alive = live();
    if (alive.length === 0 || (alive.length === 1 && round >= config.minSamples)) break;
    const sampling = alive.filter((c) => c.samples.length < config.maxSamples);
    if (sampling.length === 0) break;
    signal?.throwIfAborted();
    const outcomes = await measurer.round(sampling.map(runOf), { signal });
    rounds++;
    sampling.forEach((c, k) => take(c, outcomes[k]!, false));
    confirmed = shortCircuit(all, args.limitNanos, config);
    if (confirmed === undefined && round + 1 >= config.minSamples) {
      eliminate(all, config);
      const rest = live();
      if (rest.length > 0 && rest.every((c) => c.samples.converged())) {
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

function eliminate(all: readonly Candidate[], config: BenchConfig): void {
  const live = all.filter((c) => c.live && c.samples.best() !== undefined);
  if (live.length === 0) return;
  const best = Math.min(...live.map((c) => c.samples.best()!));
  const threshold = best * config.speedFactor;
  const budget = live.length - config.minSurvivors;
  if (budget <= 0) return;
  const slow = live
    .filter((c) => c.samples.length >= config.minSamples && c.samples.best()! > threshold)
    .sort((a, b) => b.samples.best()! - a.samples.best()!)
    .slice(0, budget);
  for (const c of slow) {
    c.drop("eliminated", `best ${ms(c.samples.best()!)} is over ${config.speedFactor}× the best ${ms(best)}`);
  }
}

/**
 * The lowest score wins; scores within `band` of it tie, and a tie goes to
 * the earliest candidate in the set's order.
 */
function pickWinner(live: readonly Candidate[], band: number): Candidate | undefined {
  const scored = live.filter((c) => c.samples.score() !== undefined);
  if (scored.length === 0) return undefined;
  const best = Math.min(...scored.map((c) => c.samples.score()!));
  return scored.filter((c) => c.samples.score()! <= best * (1 + band)).sort((a, b) => a.index - b.index)[0];
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
  int("convergenceRounds", 1);
  for (const k of ["speedFactor", "convergence", "tieBand"] as const) {
    if (!(b[k] >= 0) || !Number.isFinite(b[k])) throw new RangeError(`Tuner: bench.${k} must be a finite number ≥ 0`);
  }
  if (b.speedFactor < 1) throw new RangeError("Tuner: bench.speedFactor must be ≥ 1");
  return Object.freeze({ ...b });
}
