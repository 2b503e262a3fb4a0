/**
 * Options of a server (how it gets its device, batching, memory, logging,
 * timing, autotune and reads), and the default batching: what a client asks
 * for, whichever thread its device lives on.
 *
 * @module
 */

import type { LoggerOptions } from "../logger.ts";
import type { TuneCacheOption } from "../tune/create_tune_store.ts";
import type { MemoryConfiguration, PersistentMemoryPolicy } from "../contract/memory_types.ts";

/** How to obtain a device. */
export interface DeviceOptions {
  /** Options for `navigator.gpu.requestAdapter()`. */
  adapter?: GPURequestAdapterOptions;
  /**
   * Use this device instead of requesting one. The caller keeps ownership:
   * destroying the client leaves it usable. Its properties, fallback flag
   * included, come from `device.adapterInfo`.
   */
  device?: GPUDevice;
  /** Extra features to require (of a given `device`: features it must have). */
  requiredFeatures?: GPUFeatureName[];
}

/** Options of a server. */
export interface ServerOptions extends DeviceOptions {
  /**
   * Dispatches per submit on each stream. Larger batches cost less host time
   * per launch; smaller ones start the device sooner. @default 512
   */
  tasksMax?: number;
  /** Number of stream slots; stream `id` uses slot `id % maxStreams`. @default 128 */
  maxStreams?: number;
  /** Pool layout of the main memory of every stream. @default "compact" */
  memory?: MemoryConfiguration;
  /** How persistent allocation mode is honoured. @default "enabled" */
  persistentMemory?: PersistentMemoryPolicy;
  /** Logger levels; when omitted, read from the `DENOGPU_LOG` environment variable. */
  logger?: LoggerOptions;
  /**
   * How profiles are timed: `device` (GPU timestamps, when the device has
   * `timestamp-query`) or `system` (host clock around completion waits).
   * @default "device" when available, else "system"
   */
  timing?: "device" | "system";
  /**
   * Open each stream's next command encoder and compute pass right after it
   * submits, so the first launch after a submit finds them open; when false
   * the first command after a submit opens them. On the software adapter,
   * opening ahead raised back-to-back graph replays from 1.07–1.25× the raw
   * floor to 1.37–1.58× (`bench/RESULTS.md`, run 21); on the H200 it made
   * launches cheaper.
   * @default true on hardware adapters, false on fallback (software) ones
   */
  openPassAhead?: boolean;
  /**
   * Where autotune decisions persist: `"local-storage"` (Deno's
   * `localStorage`, shared by `deno run`, `deno test` and `deno bench` of one
   * project; no permission), `"memory"` (nothing persists), a JSON file path
   * (Windows paths too: `C:\x\tune.json`, `\\server\share\tune.json`) or
   * `file:` URL (read and write permission for its folder, where a lock file
   * and a temporary file go beside it; reading alone needs the file), or a
   * store.
   * @default "local-storage"
   */
  tuneCache?: TuneCacheOption;
  /**
   * Fast reads (opt-in): reads, `readMany`, `readTensor`, `sync` and profile
   * read-backs skip the fixed 10 ms Deno 2.9 waits after the device is done,
   * by reading a staging buffer as soon as `mapAsync()` returns (the mapping
   * is complete then, though its promise settles 10 ms later). This relies on
   * Deno not checking the map state, so it is on only on Deno 2.9.x and after
   * a self-test when the client starts; otherwise the client warns once and
   * reads through the spec path. `client.fastReads` says whether it is on.
   * @default false
   */
  fastReads?: boolean;
}

/** Default dispatches per submit (see `bench/RESULTS.md` for the measurement behind it). */
export const DEFAULT_TASKS_MAX = 512;
