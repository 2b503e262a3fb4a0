/**
 * Options of a server, and the default batching.
 *
 * @module
 */

import type { LoggerOptions } from "../logger.ts";
import type { MemoryConfiguration, PersistentMemoryPolicy } from "../memory/memory_config.ts";
import type { DeviceOptions } from "./device.ts";

/** Options of a server. */
export interface ServerOptions extends DeviceOptions {
  /**
   * Dispatches per submit on each stream. Larger batches cost less host time
   * per launch; smaller ones start the device sooner. @default 512
   */
  tasksMax?: number;
  /** Number of stream slots; stream `id` uses slot `id % maxStreams`. @default 128 */
  maxStreams?: number;
  /** Pool layout of the main memory of every stream. @default "subslices" */
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
}

/** Default dispatches per submit (see `bench/RESULTS.md` for the measurement behind it). */
export const DEFAULT_TASKS_MAX = 512;
