/**
 * What a tuning reports about each candidate: the records persisted with a
 * decision, and the failures an `AutotuneError` lists.
 *
 * @module
 */

import type { CandidateFailure } from "../errors/tune_errors.ts";
import type { CandidateRecord } from "./adaptive.ts";
import type { TuneResultRecord } from "./tune_store.ts";

/**
 * Each candidate's result, in candidate order: measured, eliminated, failed
 * or unmeasured ones from their records, skipped ones by priority; candidates
 * the plan never reached are left out.
 *
 * @param names Every candidate's name.
 * @param records The batches' records.
 * @param skipped Indices skipped by a negative priority.
 * @returns The records.
 */
export function resultRecords(
  names: readonly string[],
  records: readonly CandidateRecord[],
  skipped: readonly number[],
): TuneResultRecord[] {
  const out: TuneResultRecord[] = [];
  names.forEach((name, i) => {
    const r = records.find((x) => x.index === i);
    if (r !== undefined) {
      out.push({
        name,
        status: r.status,
        samples: r.samples.length,
        ...(r.score !== undefined ? { score: r.score } : {}),
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
      });
    } else if (skipped.includes(i)) {
      out.push({ name, status: "skipped", reason: "negative priority for this key" });
    }
  });
  return out;
}

/**
 * Every candidate's failure, in candidate order, for an `AutotuneError`.
 *
 * @param names Every candidate's name.
 * @param records The batches' records.
 * @param skipped Indices skipped by a negative priority.
 * @returns The failures.
 */
export function failures(
  names: readonly string[],
  records: readonly CandidateRecord[],
  skipped: readonly number[],
): CandidateFailure[] {
  return names.map((name, i) => {
    const r = records.find((x) => x.index === i);
    if (r !== undefined) {
      return { candidate: name, reason: r.reason ?? r.status, ...(r.error !== undefined ? { error: r.error } : {}) };
    }
    return {
      candidate: name,
      reason: skipped.includes(i) ? "skipped: negative priority for this key" : "not run",
    };
  });
}
