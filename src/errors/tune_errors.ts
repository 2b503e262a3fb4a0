/**
 * Errors of autotuning: no candidate of a tunable set could run for a key.
 *
 * @module
 */

import { ServerError } from "./server_errors.ts";

/** Why one candidate of a tunable set was left out of the decision. */
export interface CandidateFailure {
  /** The candidate's name. */
  readonly candidate: string;
  /** What happened, in words: the error's message, the time limit, or why it was skipped. */
  readonly reason: string;
  /** The error the candidate raised, when there was one. */
  readonly error?: unknown;
}

/**
 * No candidate of a tunable set worked for a key: each one threw, failed to
 * compile, ran past the time limit, or was skipped by a negative priority.
 * Raised by `autotune` (the tuner's `tune`) after every batch of the plan was
 * tried; nothing is cached, so the next call for the key tunes again.
 *
 * @example Usage
 * ```ts ignore
 * import { AutotuneError } from "@denogpu/runtime";
 * try {
 *   await tuner.tune(matmulSet, input);
 * } catch (e) {
 *   if (!(e instanceof AutotuneError)) throw e;
 *   for (const f of e.failures) console.log(f.candidate, f.reason);
 * }
 * ```
 */
export class AutotuneError extends ServerError {
  /** The tunable set's name. */
  readonly set: string;
  /** The key, as JSON. */
  readonly key: string;
  /** Every candidate of the set with the reason it was left out, in candidate order. */
  readonly failures: readonly CandidateFailure[];

  /**
   * Builds the error.
   *
   * @param set The tunable set's name.
   * @param key The key, as JSON.
   * @param failures Every candidate's failure, in candidate order.
   */
  constructor(set: string, key: string, failures: readonly CandidateFailure[]) {
    const lines = failures.map((f) => `  - ${f.candidate}: ${f.reason}`);
    super(
      `autotune "${set}" for key ${key}: no candidate worked (${failures.length} tried or skipped):\n${
        lines.join("\n")
      }`,
      { cause: failures.find((f) => f.error !== undefined)?.error },
    );
    this.set = set;
    this.key = key;
    this.failures = failures;
  }
}
