/**
 * The seam between the tuner and a device: a `TuneMeasurer` runs a round of
 * candidate runs and reports one outcome per run. One round is meant to cost
 * one device wait, whatever the number of runs (in Deno every map wait costs
 * at least 10 ms, so a wait per sample would dominate tuning).
 *
 * `profileMeasurer` (in `profile_measurer.ts`) implements it over a client's
 * profiling calls; tests implement it with scripted timings.
 *
 * @module
 */

/** A run was measured: the device (or host) time of its work. */
export interface SampleOutcome {
  /** Discriminant. */
  readonly kind: "sample";
  /** Nanoseconds. */
  readonly nanos: number;
}

/** A run completed but could not be measured (it dispatched nothing that was timed). */
export interface UnmeasuredOutcome {
  /** Discriminant. */
  readonly kind: "unmeasured";
  /** Why. */
  readonly reason: string;
}

/** A run failed: it threw, or its work queued an error (a compilation error, a validation error). */
export interface FailureOutcome {
  /** Discriminant. */
  readonly kind: "failure";
  /** The error. */
  readonly error: unknown;
}

/** What a measurer reports for one run. */
export type RunOutcome = SampleOutcome | UnmeasuredOutcome | FailureOutcome;

/** Options of one round. */
export interface RoundOptions {
  /** Cancels the round: it rejects with the signal's reason, between runs at the latest. */
  readonly signal?: AbortSignal;
}

/**
 * Measures rounds of runs. Contract:
 * - `round` calls each run exactly once, in order, holding the device (no
 *   other work interleaves), and resolves to one outcome per run, in order;
 * - a run that throws or rejects, or whose work queues an error, gets a
 *   `failure` outcome, and the other runs of the round are still measured;
 * - measurements of a round should cost one device wait in total;
 * - it rejects only when the signal aborted, or the device is unusable.
 */
export interface TuneMeasurer {
  /** How samples are timed: `device` (timestamp queries) or `system` (host clock around waits). */
  readonly method: "device" | "system";
  /**
   * Runs and measures each run once.
   *
   * @param runs The runs; each may return a promise, which is awaited.
   * @param options The abort signal.
   * @returns One outcome per run, in order.
   */
  round(runs: readonly (() => unknown)[], options?: RoundOptions): Promise<RunOutcome[]>;
}
