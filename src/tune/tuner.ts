/**
 * `Tuner`: picks a tunable set's candidate for a key by measuring them, keeps
 * the decision for the process and in a persistent store, and runs the winner
 * (CubeCL's `Tuner` / `LocalTuner::execute`, section 8.5).
 *
 * It holds no device: measuring goes through a `TuneMeasurer`, so the client
 * supplies one (`profileMeasurer(client)`) and tests a scripted one. The
 * client's `autotune(set, input)` is `tuner.tune(set, input)`.
 *
 * @module
 */

import { AutotuneError } from "../errors/tune_errors.ts";
import { canonicalJson } from "./_canonical_json.ts";
import {
  type BenchConfig,
  type CandidateRecord,
  checkBenchConfig,
  checkCandidate,
  DEFAULT_BENCH,
  measureBatch,
} from "./adaptive.ts";
import { failures, resultRecords } from "./_decision_records.ts";
import type { TuneMeasurer } from "./measurer.ts";
import { candidatePriority, groupPriority, type JsonValue, type TunableSet } from "./tunable_set.ts";
import { TunePlan } from "./tune_plan.ts";
import { memoryTuneStore, storeKey, type TuneResultRecord, type TuneStore } from "./tune_store.ts";
import { joinShared, type Shared, startShared } from "./_shared_tuning.ts";

/** Receives the tuner's log lines: `warn` for dropped candidates and store failures, `info` for decisions. */
export type TuneLog = (level: "info" | "warn", message: string) => void;

/** Options of a {@linkcode Tuner}. */
export interface TunerOptions {
  /** Measures rounds of runs on the device (a call's own `measurer` option takes precedence). */
  readonly measurer?: TuneMeasurer;
  /** Where decisions persist. @default a memory store (nothing persists) */
  readonly store?: TuneStore;
  /** The device key (see `tuneDeviceKey`): decisions persist per device. @default "unknown-device" */
  readonly device?: string;
  /** Adaptive strategy knobs. */
  readonly bench?: Partial<BenchConfig>;
  /** A sample, or a run not settled, past this drops the candidate. @default 3000 */
  readonly timeLimitMs?: number;
  /** Log sink. @default `warn` lines to `console.warn`, `info` lines dropped */
  readonly log?: TuneLog;
}

/** A progress report of a tuning. */
export interface TuneProgress {
  /** The set's name. */
  readonly set: string;
  /** The key, as JSON. */
  readonly key: string;
  /** `batch`: a batch starts; `round`: a round was measured; `done`: decided. */
  readonly phase: "batch" | "round" | "done";
  /** Batch number, from 0. */
  readonly batch: number;
  /** Round number within the batch, from 0 (-1 before the first). */
  readonly round: number;
  /** Candidates still competing. */
  readonly live: readonly string[];
  /** The winner, when `done`. */
  readonly winner?: string;
}

/** Options of one `tune` call. */
export interface TuneOptions {
  /**
   * Cancels this call's wait, rejecting with the signal's reason. The tuning
   * itself stops (and nothing is cached) once every call waiting on it aborted.
   */
  readonly signal?: AbortSignal;
  /** Receives progress reports of the tuning this call waits on. */
  readonly onProgress?: (progress: TuneProgress) => void;
  /**
   * Measures this call's tuning instead of the tuner's measurer: a client
   * passes one over its own stream, the stream its candidates launch on.
   */
  readonly measurer?: TuneMeasurer;
}

/** How a decision was reached. */
export type DecisionSource = "tuned" | "persisted" | "single" | "unmeasured";

/** The decision for one key. */
export interface TuneDecision {
  /** The set's name. */
  readonly set: string;
  /** The key, as JSON. */
  readonly key: string;
  /** The winner's index in the set. */
  readonly index: number;
  /** The winner's name. */
  readonly winner: string;
  /**
   * How it was reached: measured now, read from the store, the only
   * candidate (checked with one run first: it failing is an `AutotuneError`),
   * or unmeasurable.
   */
  readonly source: DecisionSource;
  /** Each candidate's result, in candidate order (for `persisted`, as stored). */
  readonly results: readonly TuneResultRecord[];
  /** Measurement rounds spent (1 for `single`, its check; 0 for `persisted`). */
  readonly rounds: number;
  /** Milliseconds the decision took. */
  readonly elapsedMs: number;
}

// deno-lint-ignore no-explicit-any
type AnySet = TunableSet<any, any, any>;

/**
 * Tunes sets of candidates.
 *
 * @example Pick the faster of two candidates with a scripted measurer
 * ```ts
 * import { defineTunableSet, Tuner, type TuneMeasurer } from "@denogpu/runtime/tune";
 *
 * const times = new Map([["slow", 2e6], ["fast", 1e6]]);
 * let current = "";
 * const measurer: TuneMeasurer = {
 *   method: "device",
 *   round: async (runs) => runs.map((run) => (run(), { kind: "sample", nanos: times.get(current)! })),
 * };
 * const set = defineTunableSet({
 *   name: "demo",
 *   key: (n: number) => n,
 *   candidates: [...times.keys()].map((name) => ({ name, run: (n: number) => (current = name, n) })),
 * });
 * const tuner = new Tuner({ measurer });
 * await tuner.tune(set, 1);
 * console.log(tuner.decision(set, 1)?.winner); // "fast"
 * ```
 */
export class Tuner {
  #measurer: TuneMeasurer | undefined;
  #store: TuneStore;
  #device: string;
  #bench: BenchConfig;
  #timeLimitMs: number;
  #log: TuneLog;
  #decisions = new WeakMap<AnySet, Map<string, TuneDecision>>();
  #pending = new WeakMap<AnySet, Map<string, Shared<TuneDecision, TuneProgress>>>();

  /**
   * Creates a tuner.
   *
   * @param options The measurer, the store, the device key and knobs.
   * @throws {TypeError} When the measurer is not a `TuneMeasurer`.
   * @throws {RangeError} When a knob is out of range.
   */
  constructor(options: TunerOptions) {
    if (options?.measurer !== undefined && typeof options.measurer.round !== "function") {
      throw new TypeError("Tuner: options.measurer must be a TuneMeasurer (an object with a round method)");
    }
    this.#measurer = options.measurer;
    this.#store = options.store ?? memoryTuneStore();
    this.#device = options.device ?? "unknown-device";
    this.#bench = checkBenchConfig({ ...DEFAULT_BENCH, ...options.bench });
    this.#timeLimitMs = options.timeLimitMs ?? 3000;
    if (!(this.#timeLimitMs > 0)) throw new RangeError(`Tuner: timeLimitMs must be > 0, got ${this.#timeLimitMs}`);
    this.#log = options.log ?? ((level, message) => level === "warn" && console.warn(message));
  }

  /** The store decisions persist in. */
  get store(): TuneStore {
    return this.#store;
  }

  /**
   * Runs the set's best candidate for `input` and returns what its `run`
   * returned. The first call for a key decides: from the store when it holds
   * a decision with the set's checksum, else by measuring; concurrent calls
   * for the key wait on the same decision. Later calls run the winner only.
   *
   * @param set The set.
   * @param input The input.
   * @param options Abort signal and progress callback.
   * @returns The winner's output.
   * @throws {AutotuneError} When no candidate worked (nothing is cached).
   * @throws The signal's reason when it aborts first; whatever the winner's run throws.
   */
  async tune<In, Out, K extends JsonValue>(
    set: TunableSet<In, Out, K>,
    input: In,
    options: TuneOptions = {},
  ): Promise<Out> {
    const d = await this.decide(set, input, options);
    return await set.candidates[d.index]!.run(input);
  }

  /**
   * Decides the winner for `input`'s key without running it on `input`.
   *
   * @param set The set.
   * @param input The input (used for its key, and to measure on when tuning).
   * @param options Abort signal and progress callback.
   * @returns The decision.
   * @throws {AutotuneError} When no candidate worked.
   * @throws The signal's reason when it aborts first.
   */
  decide<In, Out, K extends JsonValue>(
    set: TunableSet<In, Out, K>,
    input: In,
    options: TuneOptions = {},
  ): Promise<TuneDecision> {
    options.signal?.throwIfAborted();
    const key = set.key(input);
    const keyJson = canonicalJson(key, `autotune "${set.name}"`);
    const known = this.#memo(set).get(keyJson);
    if (known !== undefined) return Promise.resolve(known);
    let pending = this.#pending.get(set);
    if (pending === undefined) this.#pending.set(set, pending = new Map());
    let shared = pending.get(keyJson);
    if (shared === undefined) {
      const map = pending;
      shared = startShared<TuneDecision, TuneProgress>((signal, emit) =>
        this.#tuneKey(set, input, key, keyJson, options.measurer ?? this.#measurer, signal, emit).then((d) => {
          this.#memo(set).set(keyJson, d);
          return d;
        })
      );
      const s = shared;
      map.set(keyJson, s);
      s.promise.finally(() => map.get(keyJson) === s && map.delete(keyJson)).catch(() => {});
      s.onAbort = () => map.get(keyJson) === s && map.delete(keyJson);
    }
    return joinShared(shared, options.signal, options.onProgress);
  }

  /**
   * The decision already made for `input`'s key in this process, if any (no store read).
   *
   * @param set The set.
   * @param input The input.
   * @returns The decision, or undefined.
   */
  decision<In, Out, K extends JsonValue>(set: TunableSet<In, Out, K>, input: In): TuneDecision | undefined {
    return this.#memo(set).get(canonicalJson(set.key(input), `autotune "${set.name}"`));
  }

  #memo(set: AnySet): Map<string, TuneDecision> {
    let m = this.#decisions.get(set);
    if (m === undefined) this.#decisions.set(set, m = new Map());
    return m;
  }

  async #tuneKey<In, Out, K extends JsonValue>(
    set: TunableSet<In, Out, K>,
    input: In,
    key: K,
    keyJson: string,
    measurer: TuneMeasurer | undefined,
    signal: AbortSignal,
    emit: (p: TuneProgress) => void,
  ): Promise<TuneDecision> {
    const started = performance.now();
    const names = set.candidates.map((c) => c.name);
    const decided = (index: number, source: DecisionSource, results: readonly TuneResultRecord[], rounds: number) => {
      const d = { set: set.name, key: keyJson, index, winner: names[index]!, source, results, rounds };
      emit({ set: set.name, key: keyJson, phase: "done", batch: -1, round: -1, live: [], winner: d.winner });
      return { ...d, elapsedMs: performance.now() - started };
    };
    const sk = storeKey(this.#device, set.name, keyJson);
    const priorities = names.map((_, i) => candidatePriority(set, i, key));
    const entry = await this.#guard(() => this.#store.get(sk), `reading ${this.#store.description}`);
    if (entry !== undefined && entry.checksum === set.checksum) {
      const index = names.indexOf(entry.winner);
      if (index >= 0 && priorities[index]! >= 0) return decided(index, "persisted", entry.results ?? [], 0);
    }
    const alone = set.candidates.length === 1 && priorities[0]! >= 0;
    if (alone && measurer === undefined) return decided(0, "single", [], 0); // nothing to check device work with
    if (measurer === undefined) {
      throw new TypeError(`autotune "${set.name}" ${keyJson}: no measurer (give the Tuner or the call one)`);
    }
    signal.throwIfAborted();
    const benchInput = set.inputs === undefined ? input : await set.inputs(input, key);
    if (alone) {
      // Not measured, but checked: a launch queues its compilation and validation errors for the next read.
      const only = set.candidates[0]!;
      const record = await checkCandidate({
        index: 0,
        name: only.name,
        run: () => only.run(benchInput),
        measurer,
        timeLimitMs: this.#timeLimitMs,
        signal,
      });
      if (record.status === "failed") {
        this.#log("warn", `autotune "${set.name}" ${keyJson}: dropped "${record.name}": ${record.reason}`);
        throw new AutotuneError(set.name, keyJson, failures(names, [record], []));
      }
      return decided(0, "single", resultRecords(names, [record], []), 1);
    }

    const plan = new TunePlan(names.map((_, i) => ({
      priority: priorities[i]!,
      groups: new Map(set.groupsOf(i).map((g) => [g, [groupPriority(set, g, key), priorities[i]!] as const])),
    })));
    const limitNanos = set.bounds?.(input, key)?.limitNanos;
    const records: CandidateRecord[] = [];
    let rounds = 0;
    let winner: number | undefined;
    for (let batch = 0, indices = plan.next(); indices.length > 0 && winner === undefined; indices = plan.next()) {
      const b = batch++;
      emit({ set: set.name, key: keyJson, phase: "batch", batch: b, round: -1, live: indices.map((i) => names[i]!) });
      const result = await measureBatch({
        indices,
        names,
        run: (i) => set.candidates[i]!.run(benchInput),
        measurer,
        config: this.#bench,
        limitNanos,
        timeLimitMs: this.#timeLimitMs,
        signal,
        onRound: (round, live) =>
          emit({ set: set.name, key: keyJson, phase: "round", batch: b, round, live: live.map((i) => names[i]!) }),
      });
      rounds += result.rounds;
      records.push(...result.records);
      for (const r of result.records) {
        if (r.status === "failed" || r.status === "unmeasured") {
          this.#log("warn", `autotune "${set.name}" ${keyJson}: dropped "${r.name}": ${r.reason}`);
        }
      }
      winner = result.winner;
    }
    const results = resultRecords(names, records, plan.skipped);
    if (winner === undefined) {
      const ran = records.find((r) => r.status === "unmeasured");
      if (ran === undefined) throw new AutotuneError(set.name, keyJson, failures(names, records, plan.skipped));
      this.#log(
        "warn",
        `autotune "${set.name}" ${keyJson}: nothing could be measured; using "${ran.name}" (not persisted)`,
      );
      return decided(ran.index, "unmeasured", results, rounds);
    }
    const d = decided(winner, "tuned", results, rounds);
    const score = results[winner]?.score;
    this.#log(
      "info",
      `autotune "${set.name}" ${keyJson}: "${d.winner}"${
        score === undefined ? "" : ` (${(score / 1e6).toFixed(3)} ms)`
      }` +
        ` after ${rounds} rounds, ${d.elapsedMs.toFixed(0)} ms`,
    );
    const stored = { checksum: set.checksum, winner: d.winner, method: measurer.method, results, at: Date.now() };
    await this.#guard(() => this.#store.set(sk, stored), `writing ${this.#store.description}`);
    return d;
  }

  async #guard<T>(fn: () => T | Promise<T>, what: string): Promise<T | undefined> {
    try {
      return await fn();
    } catch (e) {
      this.#log("warn", `autotune: ${what} failed (${e instanceof Error ? e.message : String(e)}); continuing without`);
      return undefined;
    }
  }
}
