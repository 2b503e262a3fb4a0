/**
 * `createTuneStore`: what `createClient({ tuneCache })` turns its option into.
 *
 * @module
 */

import { jsonFileTuneStore } from "./json_file_store.ts";
import { localStorageTuneStore } from "./local_storage_store.ts";
import { memoryTuneStore, type TuneStore } from "./tune_store.ts";
import { describe } from "../_util/describe.ts";

/**
 * Where autotune decisions persist: `"local-storage"` (the default: Deno's
 * `localStorage`, no permission needed, shared by `deno run`, `deno test` and
 * `deno bench` of one project), `"memory"` (nothing persists), a file path
 * (the platform's: on Windows `C:\x\tune.json` or `\\server\share\tune.json`)
 * or `file:` URL (a `URL`, or a string starting with `file://`) of a JSON
 * file (needs read and write permission for its folder, where a lock file and
 * a temporary file go beside it), or a store.
 */
export type TuneCacheOption = "local-storage" | "memory" | string | URL | TuneStore;

/**
 * The store for a `tuneCache` option.
 *
 * @example Usage
 * ```ts
 * import { createTuneStore } from "./create_tune_store.ts";
 * console.log(createTuneStore("memory").description); // "memory"
 * console.log(createTuneStore().description); // "localStorage"
 * ```
 *
 * @param option The option. @default "local-storage"
 * @returns The store.
 * @throws {TypeError} When the option is none of these, or `localStorage` is
 * missing for `"local-storage"`.
 */
export function createTuneStore(option: TuneCacheOption = "local-storage"): TuneStore {
  if (option === "local-storage") return localStorageTuneStore();
  if (option === "memory") return memoryTuneStore();
  if (typeof option === "string" || option instanceof URL) return jsonFileTuneStore(option);
  if (
    option !== null && typeof option === "object" && typeof option.get === "function" &&
    typeof option.set === "function"
  ) {
    return option;
  }
  throw new TypeError(
    `tuneCache must be "local-storage", "memory", a file path, a file: URL or a TuneStore, got ${describe(option)}`,
  );
}
