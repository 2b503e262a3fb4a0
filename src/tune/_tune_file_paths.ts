/**
 * The paths of a JSON file tune store (the file, its folder, its lock file and
 * its temporary files), worked out with `node:path` for the platform's rules:
 * Windows paths (`C:\x\tune.json`, `\\server\share\tune.json`, either slash)
 * and POSIX ones, and `file:` URLs of either (`file:///C:/x/tune.json`,
 * `file://server/share/tune.json`, `file:///home/x/tune.json`). Pure: the
 * platform is an argument, so both kinds are tested on any machine.
 *
 * @module
 */

import { posix, win32 } from "node:path";
import { describe } from "../_util/describe.ts";

/** Path rules: Windows or POSIX. */
export type PathPlatform = "win32" | "posix";

/** The platform this process runs on. */
export function hostPathPlatform(): PathPlatform {
  return Deno.build.os === "windows" ? "win32" : "posix";
}

/** Where a JSON file store reads and writes. */
export interface TuneFilePaths {
  /** The file, as given (a URL converted to a path). */
  readonly file: string;
  /** Its folder: created on the first write; the lock and temporary files go there. */
  readonly dir: string;
  /** The lock file, beside the file. */
  readonly lock: string;
  /**
   * A temporary file beside the file, unique to a process and a write.
   *
   * @param pid The process id.
   * @param n The write's number in this process.
   * @returns Its path.
   */
  tmp(pid: number, n: number): string;
}

/**
 * The local path of a `file:` URL under `platform`'s rules (as Node's
 * `fileURLToPath` with its `windows` option, which Deno's `node:url` does
 * not honour): on Windows a drive letter (`file:///C:/x` → `C:\x`) or a host
 * (`file://server/share/x` → `\\server\share\x`); on POSIX an empty or
 * `localhost` host. Percent-escapes are decoded; an escaped separator is
 * refused, as it would change which folder is meant.
 *
 * @param url The URL.
 * @param platform The path rules.
 * @returns The path.
 * @throws {TypeError} When the URL is not a `file:` URL, holds an escaped
 * separator, names a host on POSIX, or has neither drive nor host on Windows.
 */
export function fileUrlToPath(url: URL, platform: PathPlatform): string {
  if (url.protocol !== "file:") throw new TypeError(`jsonFileTuneStore: expected a file: URL, got ${url.href}`);
  const escapedSeparator = platform === "win32" ? /%2f|%5c/i : /%2f/i;
  if (escapedSeparator.test(url.pathname)) {
    throw new TypeError(`jsonFileTuneStore: a file: URL must not hold an escaped path separator, got ${url.href}`);
  }
  const path = decodeURIComponent(url.pathname);
  const host = url.hostname === "localhost" ? "" : url.hostname;
  if (platform === "posix") {
    if (host !== "") {
      throw new TypeError(`jsonFileTuneStore: a file: URL names no host on this platform, got ${url.href}`);
    }
    return path;
  }
  const backslashed = path.replaceAll("/", "\\");
  if (host !== "") return `\\\\${host}${backslashed}`;
  if (!/^\\[a-zA-Z]:(\\|$)/.test(backslashed)) {
    throw new TypeError(`jsonFileTuneStore: a file: URL on Windows names a drive or a host, got ${url.href}`);
  }
  return backslashed.slice(1);
}

/**
 * The paths of a store in the file `path` under `platform`'s rules. A string
 * that starts with `file://` is taken as a URL.
 *
 * @example Usage
 * ```ts
 * import { tuneFilePaths } from "./_tune_file_paths.ts";
 * const p = tuneFilePaths("C:\\cache\\tune.json", "win32");
 * console.log(p.dir); // C:\cache
 * console.log(p.lock); // C:\cache\tune.json.lock
 * ```
 *
 * @param path The file: a path or a `file:` URL.
 * @param platform The path rules. @default the host's
 * @returns The file, its folder, its lock and its temporary files.
 * @throws {TypeError} When `path` is neither a non-empty string nor a
 * `file:` URL, names a folder (ends with a separator or in `.` or `..`), or
 * is a URL {@linkcode fileUrlToPath} refuses.
 */
export function tuneFilePaths(path: string | URL, platform: PathPlatform = hostPathPlatform()): TuneFilePaths {
  let file: string;
  if (path instanceof URL) file = fileUrlToPath(path, platform);
  else if (typeof path === "string" && /^file:\/\//i.test(path)) file = fileUrlToPath(new URL(path), platform);
  else if (typeof path === "string" && path.length > 0) file = path;
  else {
    throw new TypeError(`jsonFileTuneStore: path must be a non-empty string or a file: URL, got ${describe(path)}`);
  }
  const p = platform === "win32" ? win32 : posix;
  const name = p.basename(file);
  const endsInSeparator = (platform === "win32" ? /[\\/]$/ : /\/$/).test(file);
  if (name === "" || name === "." || name === ".." || endsInSeparator) {
    throw new TypeError(`jsonFileTuneStore: ${file} names a folder; give the path of a JSON file in it`);
  }
  // The lock and temporary files are the file's own path plus a suffix: beside it whatever the path's form
  // (relative, drive-relative, UNC), and never normalized (on POSIX, "a/../b" is not "b" when a is a link).
  return { file, dir: p.dirname(file), lock: `${file}.lock`, tmp: (pid, n) => `${file}.${pid}.${n}.tmp` };
}
