/**
 * The memory administration of a server's streams: reserving memory for new
 * handles, usage and reports, cleanup, the allocation mode and the pool
 * layout. The calls after reservation submit the stream first, so the figures
 * and changes take its queued work into account.
 *
 * Deliberate departures from CubeCL's contract:
 * - `installPools` records the layout for streams created later only once it
 *   was installed on the calling stream; a refused layout (`pools-in-use`, or
 *   a `PoolConfigError`) is not recorded. CubeCL records it first (2.14).
 * - An invalid layout throws `PoolConfigError` instead of panicking.
 * - A stream has one memory manager (the main pools). Read-back staging
 *   buffers live in the stream's staging pool and kernel info words in its
 *   info arena, which replace CubeCL's staging and uniforms managers and its
 *   metadata cache; `cleanup` therefore runs the explicit cleanup of the main
 *   pools and drops the idle staging buffers and host staging memory.
 *
 * @module
 */

import type { StreamId } from "../ids.ts";
import type { ServerLogger } from "../logger.ts";
import type { HostStagingPool } from "../memory/host_staging.ts";
import type { ManagedMemory } from "../contract/managed_memory.ts";
import { resolveMemoryConfiguration } from "../memory/memory_config.ts";
import type { Stream } from "../stream/stream.ts";
import type { StreamHost, StreamSlots } from "./stream_slots.ts";
import type { DeviceProperties, MemoryKind } from "../contract/types.ts";
import { COUNT_BYTES } from "../memory/count_pool.ts";
import { combineUsage } from "../memory/memory_usage.ts";
import type { MemoryAllocationMode, MemoryConfiguration, MemoryReport, MemoryUsage } from "../contract/memory_types.ts";
import { describe } from "../_util/describe.ts";
import { formatBytesExact } from "../_util/format.ts";

/** What `ServerMemory` is built with. */
export interface ServerMemoryOptions {
  /** The server whose streams it administers. */
  server: StreamHost;
  /** The server's logger (reservations are logged at `memory=full`). */
  logger: ServerLogger;
  /** Its stream slots (they keep the pool layout of streams built later). */
  slots: StreamSlots;
  /** Its device's memory properties (pool layouts are resolved against them). */
  memory: DeviceProperties["memory"];
  /** The host staging memory dropped by `cleanup`. */
  hostStaging: HostStagingPool;
}

/** Memory administration of one server's streams. */
export class ServerMemory {
  #server: StreamHost;
  #logger: ServerLogger;
  #slots: StreamSlots;
  #memory: DeviceProperties["memory"];
  #hostStaging: HostStagingPool;

  /**
   * Creates the administration of a server's streams.
   *
   * @param options The server, its logger, its slots, its memory properties
   * and its host staging pool.
   */
  constructor(options: ServerMemoryOptions) {
    this.#server = options.server;
    this.#logger = options.logger;
    this.#slots = options.slots;
    this.#memory = options.memory;
    this.#hostStaging = options.hostStaging;
  }

  /**
   * Reserves `size` bytes on a stream and binds them to `memory` (see
   * `ComputeServer.initializeMemory`).
   *
   * @param memory A fresh, uninitialised descriptor.
   * @param size Bytes to reserve.
   * @param stream The stream whose pools serve it.
   * @param dryRun True inside a dry run: a new page gets no device memory until used.
   * @param usage `count` reserves an indirect count (at most 12 bytes) from the stream's count pool.
   * @throws {DeviceLostError} Once the device is gone.
   * @throws {RangeError} When `size` is not a non-negative integer, or above 12 for a count.
   * @throws {TypeError} When `memory` is already initialised, or `usage` is unknown.
   * @throws {IoError} `buffer-too-big`, `pool-capacity-exceeded`.
   */
  initialize(memory: ManagedMemory, size: number, stream: StreamId, dryRun: boolean, usage: MemoryKind): void {
    this.#server.checkAlive();
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new RangeError(`initializeMemory: size must be a non-negative integer, got ${size}`);
    }
    if (usage !== "storage" && usage !== "count") {
      throw new TypeError(`initializeMemory: usage must be "storage" or "count", got ${describe(usage)}`);
    }
    if (usage === "count" && size > COUNT_BYTES) {
      throw new RangeError(
        `initializeMemory: a count holds ${formatBytesExact(COUNT_BYTES)} (three u32), ${formatBytesExact(size)} asked`,
      );
    }
    if (memory.slice !== null) throw new TypeError(`initializeMemory: memory ${memory.id} is already initialized`);
    const s = this.#server.stream(stream);
    const mm = s.memory;
    const reserved = usage === "count" ? s.counts.reserve(dryRun) : mm.reserve(size, dryRun);
    mm.bind(reserved, memory);
    memory.boundBy(this.#server, usage === "count"); // reads and writes through another server refuse it
    if (this.#logger.memoryFull) {
      this.#logger.log("memory", `stream ${stream}: reserved ${formatBytesExact(size)} for memory ${memory.id}`);
    }
  }

  /**
   * Usage of a stream's main pools (see `ComputeServer.memoryUsage`).
   *
   * @param stream The stream.
   * @returns Usage of the dynamic and persistent pools.
   * @throws {DeviceLostError} Once the device is gone.
   */
  usage(stream: StreamId): MemoryUsage {
    const s = this.#submitted(stream);
    return combineUsage(s.memory.usage(), s.counts.usage());
  }

  /**
   * Per-pool report of a stream's main pools (see `ComputeServer.memoryReport`).
   *
   * @param stream The stream.
   * @returns The report.
   * @throws {DeviceLostError} Once the device is gone.
   */
  report(stream: StreamId): MemoryReport {
    const s = this.#submitted(stream);
    return { ...s.memory.report(), counts: s.counts.report() };
  }

  /**
   * Frees what can be freed in a stream's pools and staging buffers, and the
   * idle host staging memory (see `ComputeServer.memoryCleanup`).
   *
   * @param stream The stream.
   * @throws {DeviceLostError} Once the device is gone.
   */
  cleanup(stream: StreamId): void {
    const s = this.#submitted(stream);
    s.memory.cleanup(true);
    s.counts.cleanup();
    s.staging.clear();
    this.#hostStaging.clear();
  }

  /**
   * Switches a stream's allocation mode (see `ComputeServer.allocationMode`).
   *
   * @param mode `persistent` opens a window, `auto` closes one.
   * @param stream The stream.
   * @throws {DeviceLostError} Once the device is gone.
   * @throws {TypeError} For a mode other than `auto` or `persistent`.
   */
  setMode(mode: MemoryAllocationMode, stream: StreamId): void {
    this.#server.checkAlive();
    if (mode !== "auto" && mode !== "persistent") {
      throw new TypeError(`allocationMode: mode must be "auto" or "persistent", got ${describe(mode)}`);
    }
    const s = this.#server.stream(stream);
    s.submit();
    s.memory.setMode(mode);
  }

  /**
   * Rebuilds the stream's dynamic pools with a layout, then records it for
   * streams built later; a refused layout is not recorded (see
   * `ComputeServer.installMemoryPools`).
   *
   * @param config The layout.
   * @param stream The stream.
   * @throws {DeviceLostError} Once the device is gone.
   * @throws {PoolConfigError} When the layout is invalid for the device.
   * @throws {InstallMemoryPoolsError} `pools-in-use` (transient).
   */
  installPools(config: MemoryConfiguration, stream: StreamId): void {
    this.#server.checkAlive();
    const pools = resolveMemoryConfiguration(config, this.#memory);
    const s = this.#server.stream(stream);
    s.submit();
    s.memory.installPools(pools);
    // Only a layout that was installed becomes the one for streams created later.
    this.#slots.usePools(pools);
  }

  /** Checks the device, then submits the stream and returns it. */
  #submitted(stream: StreamId): Stream {
    this.#server.checkAlive();
    const s = this.#server.stream(stream);
    s.submit();
    return s;
  }
}
