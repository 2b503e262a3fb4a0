/**
 * The default store: Deno's `localStorage`, which needs no permission.
 *
 * Where Deno 2.9 keeps it, and so who shares it (checked with `deno run`,
 * `deno test` and `deno bench`): one SQLite database per origin under
 * `$DENO_DIR/location_data/<sha256 of the origin key>/local_storage`. The
 * origin key is, in order of precedence:
 * 1. the `--location` URL's origin, when given;
 * 2. else the URL of the config file (`deno.json`/`deno.jsonc`) Deno
 *    discovered: `deno run` looks for it from the main module's directory
 *    upward, `deno test` and `deno bench` from the current directory upward
 *    (`--config` picks one; `--no-config` disables it);
 * 3. else the main module's URL (each script, test or bench file apart).
 *
 * So in a project with a `deno.json`, `deno run some/script.ts`, `deno test`
 * and `deno bench` run from inside the project all share one store; a moved
 * project, another `DENO_DIR`, `--no-config` or a compiled binary does not.
 * Every `setItem` is its own transaction, so processes writing at once end
 * with one whole entry per key (the last write).
 *
 * @module
 */

import { isTuneEntry, type TuneEntry, type TuneStore } from "./tune_store.ts";

/** Options of {@linkcode localStorageTuneStore}. */
export interface LocalStorageStoreOptions {
  /** Prefix of every item's key. @default "denogpu.autotune:" */
  readonly prefix?: string;
  /** The storage (tests pass their own). @default globalThis.localStorage */
  readonly storage?: Storage;
}

/**
 * A store in `localStorage`, one item per decision.
 *
 * @example Usage
 * ```ts
 * import { localStorageTuneStore } from "./local_storage_store.ts";
 * const store = localStorageTuneStore({ prefix: "doc-example:" });
 * await store.set("k", { checksum: "c", winner: "a" });
 * console.log((await store.get("k"))?.winner); // "a"
 * localStorage.removeItem("doc-example:k");
 * ```
 *
 * @param options The prefix and the storage.
 * @returns The store.
 * @throws {TypeError} When no storage is available (`localStorage` is missing).
 */
export function localStorageTuneStore(options: LocalStorageStoreOptions = {}): TuneStore {
  const prefix = options.prefix ?? "denogpu.autotune:";
  const storage = options.storage ?? (globalThis as { localStorage?: Storage }).localStorage;
  if (storage === undefined) {
    throw new TypeError("localStorageTuneStore: localStorage is not available in this runtime; use a file or memory");
  }
  return {
    description: "localStorage",
    get(key: string): TuneEntry | undefined {
      const text = storage.getItem(prefix + key);
      if (text === null) return undefined;
      try {
        const v: unknown = JSON.parse(text);
        return isTuneEntry(v) ? v : undefined;
      } catch {
        return undefined;
      }
    },
    set(key: string, entry: TuneEntry): void {
      storage.setItem(prefix + key, JSON.stringify(entry));
    },
  };
}
