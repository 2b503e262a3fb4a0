/**
 * A store in one JSON file (`createClient({ tuneCache: path })`), for caches
 * that travel with a project or a deployment. Reading needs read access to
 * the file; writing needs read and write access to its folder
 * (`--allow-read=<folder> --allow-write=<folder>`), where the lock file and
 * the temporary file go, and to the folder above when the folder does not
 * exist yet. Without them a write fails with the error Deno raised, its
 * message naming the folder and the flags.
 *
 * Writes are merged and atomic: under a lock file, the current file is read,
 * the entry merged in, and the result written to a temporary file renamed
 * over the old one. Readers never see a partial file, and processes writing
 * at once keep each other's entries (for one key, the last write wins whole).
 *
 * @module
 */

import { isTuneEntry, type TuneEntry, type TuneStore } from "./tune_store.ts";
import { tuneFilePaths } from "./_tune_file_paths.ts";

/** The file's format. */
interface TuneFile {
  version: 1;
  entries: Record<string, TuneEntry>;
}

/** Options of {@linkcode jsonFileTuneStore}. */
export interface JsonFileStoreOptions {
  /** Give up waiting for another process's lock after this long, and write anyway. @default 2000 */
  readonly lockTimeoutMs?: number;
  /** A lock file older than this is taken as left behind by a dead process. @default 10000 */
  readonly staleLockMs?: number;
}

let tmpCounter = 0;

/**
 * A permission error raised at `file`'s read or write, as the same class with
 * a message saying what access is needed (Deno's own error is its cause).
 */
function explained(e: unknown, file: string, dir: string, writing: boolean): unknown {
  const what = writing
    ? `writing it needs read and write access to its folder ${dir}, where a lock file and a temporary file go beside it`
    : "reading it needs read access to it";
  if (e instanceof Deno.errors.NotCapable) {
    const flags = writing ? `--allow-read=${dir} --allow-write=${dir}` : `--allow-read=${file}`;
    return new Deno.errors.NotCapable(`tuneCache ${file}: ${what} (${flags})`, { cause: e });
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return new Deno.errors.PermissionDenied(`tuneCache ${file}: ${what} (${(e as Error).message})`, { cause: e });
  }
  return e;
}

async function readEntries(path: string): Promise<Record<string, TuneEntry>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return {};
    throw e;
  }
  try {
    const v = JSON.parse(text) as Partial<TuneFile> | null;
    if (v === null || typeof v !== "object" || v.version !== 1 || v.entries === null || typeof v.entries !== "object") {
      return {};
    }
    return v.entries;
  } catch {
    return {}; // a corrupt cache is an empty one; the next write replaces it
  }
}

async function acquire(lock: string, timeoutMs: number, staleMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5;; wait = Math.min(wait * 2, 50)) {
    try {
      (await Deno.open(lock, { createNew: true, write: true })).close();
      return true;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    try {
      const age = Date.now() - ((await Deno.stat(lock)).mtime?.getTime() ?? Date.now());
      if (age > staleMs) await Deno.remove(lock).catch(() => {});
    } catch {
      // removed meanwhile: try again at once
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * A store in a JSON file.
 *
 * @example Usage
 * ```ts ignore
 * import { jsonFileTuneStore } from "./json_file_store.ts";
 * const store = jsonFileTuneStore("./.autotune.json");
 * await store.set("k", { checksum: "c", winner: "a" });
 * console.log((await store.get("k"))?.winner); // "a"
 * ```
 *
 * @param path The file (created with its folder on first write; see the module's note on permissions): a path
 * under the platform's rules (on Windows `C:\x\tune.json`, `\\server\share\tune.json`, either slash) or a
 * `file:` URL (as a `URL`, or a string starting with `file://`).
 * @param options Lock timing.
 * @returns The store.
 * @throws {TypeError} When `path` is neither a non-empty string nor a `file:` URL, names a folder, or is a
 * `file:` URL of no local path (a host on POSIX, neither drive nor host on Windows, an escaped separator).
 */
export function jsonFileTuneStore(path: string | URL, options: JsonFileStoreOptions = {}): TuneStore {
  const paths = tuneFilePaths(path);
  const { file, dir, lock } = paths;
  const lockTimeoutMs = options.lockTimeoutMs ?? 2000;
  const staleLockMs = options.staleLockMs ?? 10000;
  let chain: Promise<void> = Promise.resolve(); // this process's writes, one at a time
  const write = async (key: string, entry: TuneEntry) => {
    await Deno.mkdir(dir, { recursive: true });
    const locked = await acquire(lock, lockTimeoutMs, staleLockMs);
    const tmp = paths.tmp(Deno.pid, ++tmpCounter);
    try {
      const entries = await readEntries(file);
      entries[key] = entry;
      const out: TuneFile = { version: 1, entries };
      await Deno.writeTextFile(tmp, JSON.stringify(out, null, 1) + "\n");
      await Deno.rename(tmp, file);
    } finally {
      await Deno.remove(tmp).catch(() => {});
      if (locked) await Deno.remove(lock).catch(() => {});
    }
  };
  return {
    description: file,
    async get(key: string): Promise<TuneEntry | undefined> {
      const e = (await readEntries(file).catch((e) => Promise.reject(explained(e, file, dir, false))))[key];
      return isTuneEntry(e) ? e : undefined;
    },
    set(key: string, entry: TuneEntry): Promise<void> {
      const done = chain.then(() => write(key, entry)).catch((e) => Promise.reject(explained(e, file, dir, true)));
      chain = done.catch(() => {});
      return done;
    },
  };
}
