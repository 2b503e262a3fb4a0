/**
 * The stream slots of a server: each slot's stream is built on first use with
 * the pool layout in force, kept by slot index, and submitted and destroyed
 * with the others when the server is torn down.
 *
 * @module
 */

import type { StreamId } from "../ids.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import type { TimestampOrigin } from "../profile/timestamp_profiler.ts";
import type { Stream } from "../stream/stream.ts";
import { createStream } from "./stream_factory.ts";
import type { PersistentMemoryPolicy, PoolConfig } from "../contract/memory_types.ts";
import type { OwnerResolver } from "../stream/_stream_parts.ts";

/** What the server's helpers call back: its liveness check and its stream lookup. */
export interface StreamHost {
  /** Throws the `DeviceLostError` when the device is gone. */
  checkAlive(): void;
  /**
   * The stream of an id, created on first use.
   *
   * @param id The stream id.
   * @returns The stream.
   */
  stream(id: StreamId): Stream;
}

/** What the stream slots are built with. */
export interface StreamSlotsOptions {
  /** The device context every stream shares. */
  ctx: DeviceContext;
  /** Pools of the main memory of streams built from now on, in routing order. */
  pools: PoolConfig[];
  /** Persistent allocation policy. */
  persistentMemory: PersistentMemoryPolicy;
  /** True when profiles use GPU timestamps. */
  deviceTiming: boolean;
  /** Resolves a binding through the stream that owns it. */
  resolveOwner: OwnerResolver;
}

/** The streams of a server, by slot index. */
export class StreamSlots {
  /**
   * The stream of each slot, `undefined` until first used. The server's
   * launch path indexes this array directly.
   */
  readonly streams: (Stream | undefined)[] = [];
  #ctx: DeviceContext;
  #pools: PoolConfig[];
  #persistent: PersistentMemoryPolicy;
  #deviceTiming: boolean;
  #resolveOwner: OwnerResolver;
  /** One origin of device time for every stream's profiler, so their timings share an axis. */
  #timestampOrigin: TimestampOrigin = { ticks: null };

  /**
   * Creates the slots, all empty.
   *
   * @param options The device context, the pool layout and policy, the timing
   * method and the owner resolver.
   */
  constructor(options: StreamSlotsOptions) {
    this.#ctx = options.ctx;
    this.#pools = options.pools;
    this.#persistent = options.persistentMemory;
    this.#deviceTiming = options.deviceTiming;
    this.#resolveOwner = options.resolveOwner;
  }

  /**
   * Records the pool layout of streams built from now on (streams built
   * before keep theirs).
   *
   * @param pools Pools in routing order.
   */
  usePools(pools: PoolConfig[]): void {
    this.#pools = pools;
  }

  /**
   * Builds the stream of an empty slot and keeps it there.
   *
   * @param slot The slot index (below `maxStreams`).
   * @returns The new stream.
   */
  create(slot: number): Stream {
    const stream = createStream({
      slot,
      ctx: this.#ctx,
      pools: this.#pools,
      persistentMemory: this.#persistent,
      alignment: this.#ctx.settings.alignment,
      maxBufferSize: this.#ctx.settings.maxBufferSize,
      deviceTiming: this.#deviceTiming,
      timestampOrigin: this.#timestampOrigin,
      resolveOwner: this.#resolveOwner,
    });
    this.streams[slot] = stream;
    return stream;
  }

  /**
   * Ids of the slots that hold a stream.
   *
   * @returns The ids, in slot order.
   */
  ids(): StreamId[] {
    const ids: StreamId[] = [];
    this.streams.forEach((s, i) => {
      if (s !== undefined) ids.push(i);
    });
    return ids;
  }

  /** Submits every stream, ignoring a stream whose submit throws (teardown must go on). */
  submitAll(): void {
    for (const s of this.streams) {
      try {
        s?.submit();
      } catch {
        // a broken stream must not keep the device alive
      }
    }
  }

  /** Destroys every stream. */
  destroyAll(): void {
    for (const s of this.streams) s?.destroy();
  }
}
