/**
 * Persisted autotune decisions: the entry format, the `TuneStore` interface
 * every store implements, and the memory store.
 *
 * An entry is found under a key made of the device, the set's name and the
 * tune key (see `storeKey`), and is used only while its checksum matches the
 * set's (candidate names and sources), so a changed candidate list or kernel
 * re-tunes.
 *
 * @module
 */

/** One candidate's result, as persisted with a decision. */
export interface TuneResultRecord {
  /** Candidate name. */
  readonly name: string;
  /** `measured`, `eliminated`, `failed`, `unmeasured` or `skipped`. */
  readonly status: string;
  /** Score in nanoseconds (the median of its samples), when measured. */
  readonly score?: number;
  /** Number of samples taken. */
  readonly samples?: number;
  /** Why it failed or was left out. */
  readonly reason?: string;
}

/** A persisted decision. */
export interface TuneEntry {
  /** The set's checksum when the decision was made. */
  readonly checksum: string;
  /** The winning candidate's name. */
  readonly winner: string;
  /** How it was measured. */
  readonly method?: "device" | "system";
  /** Every candidate's result, in candidate order. */
  readonly results?: readonly TuneResultRecord[];
  /** When it was decided, in milliseconds since the epoch. */
  readonly at?: number;
}

/**
 * Where decisions persist. Both methods may be synchronous or asynchronous;
 * the tuner awaits them, and logs (does not throw) when they fail: a decision
 * that cannot be persisted is still kept for the process.
 */
export interface TuneStore {
  /** What the store is, for logs (e.g. `localStorage`, a file path). */
  readonly description: string;
  /**
   * Reads an entry.
   *
   * @param key The store key.
   * @returns The entry, or undefined when there is none (or it is unreadable).
   */
  get(key: string): TuneEntry | undefined | Promise<TuneEntry | undefined>;
  /**
   * Writes an entry, replacing any under the same key.
   *
   * @param key The store key.
   * @param entry The entry.
   */
  set(key: string, entry: TuneEntry): void | Promise<void>;
}

/**
 * The store key of a decision: device, set name and tune key, unambiguous
 * whatever characters they hold.
 *
 * @param device The device key (see `tuneDeviceKey`).
 * @param set The set's name.
 * @param key The tune key as canonical JSON.
 * @returns The store key.
 */
export function storeKey(device: string, set: string, key: string): string {
  return JSON.stringify([device, set, key]);
}

/**
 * Whether a parsed value is a well-formed entry (anything else is ignored, as missing).
 *
 * @param v The value.
 * @returns True for an entry.
 */
export function isTuneEntry(v: unknown): v is TuneEntry {
  if (v === null || typeof v !== "object") return false;
  const e = v as Record<string, unknown>;
  return typeof e.checksum === "string" && typeof e.winner === "string" &&
    (e.results === undefined || Array.isArray(e.results));
}

/**
 * A store that keeps nothing beyond the process: the `"memory"` choice.
 *
 * @example Usage
 * ```ts
 * import { memoryTuneStore } from "./tune_store.ts";
 * const store = memoryTuneStore();
 * await store.set("k", { checksum: "c", winner: "a" });
 * console.log((await store.get("k"))?.winner); // "a"
 * ```
 *
 * @returns A new, empty store.
 */
export function memoryTuneStore(): TuneStore & { readonly entries: ReadonlyMap<string, TuneEntry> } {
  const entries = new Map<string, TuneEntry>();
  return {
    description: "memory",
    entries,
    get: (key) => entries.get(key),
    set: (key, entry) => void entries.set(key, entry),
  };
}
