/**
 * Autotune beyond `client.autotune`: the `Tuner` itself, the seam it measures
 * through (`TuneMeasurer`, and `profileMeasurer` over a client's profiler),
 * the stores decisions persist in, and the types of tunable sets. The main
 * entry point exports what most users need: `defineTunableSet`, `anchor`,
 * `TunableSet` and `AutotuneError`; a client's `autotune` drives the
 * device's tuner.
 *
 * ```ts
 * import { anchor, defineTunableSet } from "@denogpu/runtime";
 * import { memoryTuneStore, Tuner } from "@denogpu/runtime/tune";
 *
 * // Two ways to sum an array, tuned per size bucket on a host-only "device".
 * const sum = defineTunableSet({
 *   name: "sum",
 *   key: (xs: number[]) => anchor(xs.length),
 *   candidates: [
 *     { name: "loop", run: (xs: number[]) => { let s = 0; for (const x of xs) s += x; return s; } },
 *     { name: "reduce", run: (xs: number[]) => xs.reduce((a, b) => a + b, 0) },
 *   ],
 * });
 * const tuner = new Tuner({ store: memoryTuneStore() }); // no measurer: it refuses to measure
 * console.log(sum.candidates.length); // 2
 * console.log(tuner.store.description); // "memory"
 * ```
 *
 * @module
 */

export { anchor, type AnchorOptions, type TuneLevel } from "./src/tune/anchor.ts";
export {
  defineTunableSet,
  type JsonValue,
  type Priority,
  type TunableSet,
  type TunableSetOptions,
  type TuneBounds,
  type TuneCandidate,
} from "./src/tune/tunable_set.ts";
export {
  type DecisionSource,
  type TuneDecision,
  type TuneLog,
  type TuneOptions,
  type TuneProgress,
  Tuner,
  type TunerOptions,
} from "./src/tune/tuner.ts";
export type { BenchConfig } from "./src/tune/adaptive.ts";
export type {
  FailureOutcome,
  RoundOptions,
  RunOutcome,
  SampleOutcome,
  TuneMeasurer,
  UnmeasuredOutcome,
} from "./src/tune/measurer.ts";
export { profileMeasurer, type ProfilingClient } from "./src/tune/profile_measurer.ts";
export { memoryTuneStore, type TuneEntry, type TuneResultRecord, type TuneStore } from "./src/tune/tune_store.ts";
export { type LocalStorageStoreOptions, localStorageTuneStore } from "./src/tune/local_storage_store.ts";
export { type JsonFileStoreOptions, jsonFileTuneStore } from "./src/tune/json_file_store.ts";
export { createTuneStore, type TuneCacheOption } from "./src/tune/create_tune_store.ts";
export { type TuneDeviceInfo, tuneDeviceKey } from "./src/tune/device_key.ts";
export { AutotuneError, type CandidateFailure } from "./src/errors/tune_errors.ts";
