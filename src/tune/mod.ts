/**
 * Autotune: pick among candidate implementations of an operation by
 * measuring them on the device, keep the decision per device in a persistent
 * cache, and run the winner (CubeCL's autotune, sections 8.4 and 8.5).
 *
 * - {@linkcode defineTunableSet} declares the candidates, the key, groups and
 *   priorities; {@linkcode anchor} buckets sizes for keys.
 * - {@linkcode Tuner} decides and runs: `tuner.tune(set, input)`.
 * - {@linkcode profileMeasurer} measures rounds through a client's profiler,
 *   one device wait per round.
 * - Stores: {@linkcode localStorageTuneStore} (the default, no permission),
 *   {@linkcode jsonFileTuneStore}, {@linkcode memoryTuneStore};
 *   {@linkcode createTuneStore} maps a `tuneCache` option to one.
 *
 * @module
 */

export * from "./anchor.ts";
export * from "./tunable_set.ts";
export * from "./tune_plan.ts";
export * from "./sample_set.ts";
export * from "./adaptive.ts";
export * from "./measurer.ts";
export * from "./profile_measurer.ts";
export * from "./tune_store.ts";
export * from "./local_storage_store.ts";
export * from "./json_file_store.ts";
export * from "./create_tune_store.ts";
export * from "./device_key.ts";
export * from "./tuner.ts";
export { AutotuneError, type CandidateFailure } from "../errors/tune_errors.ts";
