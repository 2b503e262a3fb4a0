/**
 * Building a stream slot: its storage, memory manager, stream and profiler.
 *
 * @module
 */

import { MemoryManager } from "../memory/memory_manager.ts";
import { CountPool } from "../memory/count_pool.ts";
import { WebGpuStorage } from "../memory/webgpu_storage.ts";
import { type TimestampOrigin, TimestampProfiler } from "../profile/timestamp_profiler.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import { StreamMover } from "../stream/stream_mover.ts";
import { Stream } from "../stream/stream.ts";
import type { PersistentMemoryPolicy, PoolConfig } from "../contract/memory_types.ts";
import type { OwnerResolver } from "../stream/_stream_parts.ts";

/** Usage of main memory pages: storage bindings, copies both ways, indirect counts. */
const MAIN_USAGE = 0x80 /* STORAGE */ | 0x04 /* COPY_SRC */ | 0x08 /* COPY_DST */ | 0x100 /* INDIRECT */;

/** What a new stream slot is built from. */
export interface StreamParts {
  /** Slot index. */
  slot: number;
  /** The device context. */
  ctx: DeviceContext;
  /** Pools of its main memory, in routing order. */
  pools: PoolConfig[];
  /** Persistent allocation policy. */
  persistentMemory: PersistentMemoryPolicy;
  /** Pool alignment. */
  alignment: number;
  /** `maxBufferSize`. */
  maxBufferSize: number;
  /** True when profiles use GPU timestamps. */
  deviceTiming: boolean;
  /** Origin of device time shared by every stream of the server. */
  timestampOrigin: TimestampOrigin;
  /** Resolves a binding through the stream that owns it. */
  resolveOwner: OwnerResolver;
}

/**
 * Builds a stream slot with its own storage, memory manager and profiler.
 *
 * @param parts What the slot is built from.
 * @returns The stream.
 */
export function createStream(parts: StreamParts): Stream {
  const { slot, ctx } = parts;
  const label = `stream ${slot}`;
  // deno-lint-ignore prefer-const
  let stream: Stream;
  const storage = new WebGpuStorage({
    device: ctx.device,
    usage: MAIN_USAGE,
    alignment: parts.alignment,
    maxBufferSize: parts.maxBufferSize,
    isIdle: () => !stream.hasWork,
    reportError: (e) => stream.errors.push(e),
    onDestroy: (id) => ctx.storageDestroyed(id),
  });
  const memory = new MemoryManager(storage, {
    pools: parts.pools,
    persistentMemory: parts.persistentMemory,
    label: `${label} main`,
    log: ctx.logger.memory ? (m) => ctx.logger.log("memory", m) : undefined,
  });
  const counts = new CountPool(storage, label);
  stream = new Stream({ slot, ctx, memory, counts, storage, resolveOwner: parts.resolveOwner });
  memory.setMover(new StreamMover(stream, ctx)); // pools that compact move this stream's memory in its order
  if (parts.deviceTiming) {
    stream.profiler = new TimestampProfiler(ctx.device, slot, label, parts.timestampOrigin, {
      pool: stream.staging,
      fastReads: ctx.fastReads,
    });
    if (ctx.logger.profiling !== "disabled" && ctx.logger.profiling !== "minimal") {
      stream.profiler.logTo((t) => ctx.logger.registerProfiled(t.name, t.end - t.start));
      stream.timestamping = true;
    }
  }
  return stream;
}
