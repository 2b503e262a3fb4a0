/**
 * The `ComputeServer` contract: CubeCL's trait, camelCased, for one device.
 *
 * A server owns all GPU state of a device. Work is organised in streams
 * (`StreamId`), each with its own encoder, memory and error queue; every stream
 * submits to the device's one queue.
 *
 * Ordering and cost rules every implementation keeps:
 * - `launch`, `write` and `replay` only enqueue. They never throw for
 *   device-side failures: those are queued on the stream and raised, all at
 *   once, by the next draining call (`flush`, `sync`, `read`, `startProfile`,
 *   `endProfile`, `beginCapture`, `endCapture`) as a `ServerUnhealthyError`.
 *   Draining empties the queue.
 * - Argument errors (unknown stream, stale handle, bad strides in `read`)
 *   throw or reject at once.
 * - A read reflects every write and launch queued before it on the calling
 *   stream and on the streams owning the memory read.
 * - `read` and `sync` cost one device completion wait each (on Deno at least
 *   10 ms); reads requested in the same tick share one wait.
 *
 * @module
 */

import type { GraphId, ProfilingToken, StreamId } from "../ids.ts";
import type { ServerLogger } from "../logger.ts";
import type { ManagedMemory } from "./managed_memory.ts";
import type {
  BufferBinding,
  CollectiveOptions,
  CopyDescriptor,
  CubeCount,
  DeviceId,
  DeviceProperties,
  ElemType,
  KernelArguments,
  LaunchMode,
  ManagedResource,
  MemoryKind,
  ProfileDuration,
  ReduceOperation,
} from "./types.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutPolicy,
  MemoryReport,
  MemoryUsage,
} from "./memory_types.ts";
import type { Kernel } from "./kernel.ts";

/** What the server shares with clients without a round trip (CubeCL's `ServerUtilities`). */
export interface ServerUtilities {
  /** Device properties. */
  readonly properties: DeviceProperties;
  /** The server's logger. */
  readonly logger: ServerLogger;
  /** Decides where tensors of a group live in one reservation (contiguous on WebGPU). */
  readonly layoutPolicy: MemoryLayoutPolicy;
}

/**
 * Collectives between devices (CubeCL's `ServerCommunication`), staged
 * through host memory. The sorted device set names the communicator, and a
 * device's rank is its position in it; the `n`-th collective call of each
 * participant joins slot `n` (each direction of a send/recv pair counts its
 * own slots). A collective reads its source as the work queued before the
 * call left it. Each call returns a promise, marked handled, that settles
 * once this device's part is done: the result written on this device, so
 * work issued afterwards sees it; argument errors throw at once. Failures
 * are `CollectiveError`s on every participant.
 */
export interface ServerCommunication {
  /**
   * Creates (once) the communicator of a sorted device set.
   *
   * @param devices The participants, this device among them.
   * @throws {CollectiveError} `unknown-device` for a device that is not open;
   * `not-a-participant` when this device is not in the set.
   */
  commInit(devices: readonly DeviceId[]): void;
  /**
   * Reduces `src` across devices into `dst`; every participant calls it with
   * the same set, element type, reduction and byte count.
   *
   * @param src Source memory.
   * @param dst Destination memory, as long as `src` (may be `src`).
   * @param dtype Element type; the element count is the byte count over its size.
   * @param stream Stream to order it on.
   * @param op `sum`, `mean`, `max` or `min`.
   * @param devices The participants.
   * @param options Timeout, abort signal, where to reduce.
   * @returns Settles once `dst` holds the result on this device.
   */
  allReduce(
    src: BufferBinding,
    dst: BufferBinding,
    dtype: ElemType,
    stream: StreamId,
    op: ReduceOperation,
    devices: readonly DeviceId[],
    options?: CollectiveOptions,
  ): Promise<void>;
  /**
   * Sends memory to a peer device, which receives it with `recv`.
   *
   * @param descriptor What to send (contiguous).
   * @param dtype Element type.
   * @param stream Stream to order it on.
   * @param dst The receiving device.
   * @param options Timeout and abort signal.
   * @returns Settles once the receiver has written the bytes.
   */
  send(
    descriptor: CopyDescriptor,
    dtype: ElemType,
    stream: StreamId,
    dst: DeviceId,
    options?: CollectiveOptions,
  ): Promise<void>;
  /**
   * Receives memory from a peer device into memory of the same byte count
   * (CubeCL reserves it here; this port receives into bound memory).
   *
   * @param binding Where the bytes go.
   * @param dtype Element type.
   * @param stream Stream to order it on.
   * @param src The sending device.
   * @param options Timeout and abort signal.
   * @returns Settles once the bytes are written on this device.
   */
  recv(
    binding: BufferBinding,
    dtype: ElemType,
    stream: StreamId,
    src: DeviceId,
    options?: CollectiveOptions,
  ): Promise<void>;
  /**
   * Waits for every collective this device called before it; later compute
   * work issued after it settles sees their results.
   *
   * @param stream The compute stream.
   * @returns Rejects with the earliest `CollectiveError` not reported by an earlier `syncCollective`.
   */
  syncCollective(stream: StreamId): Promise<void>;
}

/** Lifecycle of a per-device service (CubeCL's `DeviceService`). */
export interface DeviceService {
  /** Identity of the device. */
  readonly deviceId: DeviceId;
  /**
   * Shared utilities.
   *
   * @returns The utilities.
   */
  utilities(): ServerUtilities;
  /**
   * `downstream` for kernel execution services.
   *
   * @returns The service stage.
   */
  stage(): "downstream" | "upstream";
}

/** The compute server of one device. */
export interface ComputeServer extends ServerCommunication, DeviceService {
  /**
   * Reserves `size` bytes on `stream` and binds them to `memory`
   * (synchronous bookkeeping; may create a device buffer).
   *
   * @param memory A fresh, uninitialised descriptor.
   * @param size Bytes to reserve.
   * @param stream The stream whose pools serve it.
   * @param kind `count` for an indirect workgroup count (at most 12 bytes), from
   * pages that hold counts only; `storage` (the default) from the pools, by size.
   * @throws {IoError} `buffer-too-big`, `pool-capacity-exceeded`.
   */
  initializeMemory(memory: ManagedMemory, size: number, stream: StreamId, kind?: MemoryKind): void;
  /**
   * The server's logger.
   *
   * @returns The server's logger.
   */
  logger(): ServerLogger;
  /**
   * Reads memory back to the host.
   *
   * @param descriptors What to read; contiguous strides only.
   * @param stream The calling stream.
   * @returns Exactly `product(shape) × elemSize` bytes per descriptor.
   * Rejects with `IoError` (`unsupported-strides`, `not-found`) and with
   * `TypeError` for memory of another server at once, and with
   * `ServerUnhealthyError` when the stream's error queue held errors.
   */
  read(descriptors: readonly CopyDescriptor[], stream: StreamId): Promise<Uint8Array<ArrayBuffer>[]>;
  /**
   * Writes bytes into memory, ordered after everything queued before it on
   * the calling stream and on any stream with queued work on that memory.
   * Bad arguments throw before anything is written; failures found while
   * writing (stale memory, non-contiguous strides) are queued on the memory's
   * stream.
   *
   * @param writes Pairs of descriptor and bytes (exactly the descriptor's length).
   * @param stream The calling stream.
   * @throws {TypeError} When `writes` is not an array of descriptor and bytes
   * pairs, or names memory of another server.
   * @throws {RangeError} For a malformed descriptor or binding (one claiming
   * more bytes than its memory holds among them), or bytes of the wrong length.
   */
  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId): void;
  /**
   * Submits the stream and waits until the device has run everything
   * submitted, then drains errors.
   *
   * @param stream The stream.
   * @returns Rejects with `ServerUnhealthyError` when errors were queued.
   */
  sync(stream: StreamId): Promise<void>;
  /**
   * The raw buffer range behind a binding, for interop. Submits the streams
   * involved first.
   *
   * @param binding The memory.
   * @param stream The calling stream.
   * @returns The range; call `release()` when done.
   * @throws {IoError} `not-found` for a stale binding.
   * @throws {TypeError} For memory of another server.
   * @throws {RangeError} For a binding claiming more bytes than its memory holds.
   */
  getResource(binding: BufferBinding, stream: StreamId): ManagedResource;
  /**
   * Enqueues a kernel launch. Never throws for device-side failures (queued);
   * throws at once for argument errors.
   *
   * @param kernel The kernel.
   * @param count Workgroups to dispatch.
   * @param args Buffers and info words.
   * @param mode `execute`, or `skip` to compile and cache only.
   * @param stream The launching stream.
   */
  launch(kernel: Kernel, count: CubeCount, args: KernelArguments, mode: LaunchMode, stream: StreamId): void;
  /**
   * Submits the stream's queued work and drains its errors, without waiting
   * for the device. Await it to learn about failures.
   *
   * @param stream The stream.
   * @returns Rejects with `ServerUnhealthyError` when errors were queued.
   */
  flush(stream: StreamId): Promise<void>;
  /**
   * Memory usage.
   *
   * @param stream The stream.
   * @returns Usage of the stream's main pools (dynamic and persistent).
   */
  memoryUsage(stream: StreamId): MemoryUsage;
  /**
   * Per-pool memory report.
   *
   * @param stream The stream.
   * @returns Per-pool report of the stream's main pools.
   */
  memoryReport(stream: StreamId): MemoryReport;
  /**
   * Frees what can be freed in the stream's pools (best effort).
   *
   * @param stream The stream.
   */
  memoryCleanup(stream: StreamId): void;
  /**
   * Opens a profile. Rejected while the stream records a graph.
   *
   * @param stream The stream.
   * @returns A token for `endProfile`.
   */
  startProfile(stream: StreamId): Promise<ProfilingToken>;
  /**
   * Closes a profile.
   *
   * @param stream The stream the profile was opened on.
   * @param token A token from `startProfile`, ended once.
   * @returns The duration; rejects with `ProfileError` (`not-registered`) for an
   * unknown or already ended token, or one opened on another stream.
   */
  endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration>;
  /**
   * Switches the allocation mode of the stream; persistent windows nest.
   *
   * @param mode `persistent` opens a window, `auto` closes one.
   * @param stream The stream.
   */
  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void;
  /**
   * Lends reusable host staging memory of the given sizes.
   *
   * @param sizes Bytes of each buffer.
   * @param stream The stream.
   * @returns Host buffers to fill and pass to `write`.
   */
  staging(sizes: readonly number[], stream: StreamId): Uint8Array[];
  /**
   * Arms graph capture: allocations go to the persistent pool and the warm-up
   * that follows runs normally. Refused with `GraphStateError` when the stream
   * is already prepared or recording, or while a dry run is open (its launches
   * only compile, so nothing would be recorded).
   *
   * @param stream The stream.
   */
  graphPrepare(stream: StreamId): void;
  /**
   * Starts recording: launches are recorded, not executed. Rejects with
   * `GraphStateError` when the stream is not prepared, or while a dry run is
   * open (the stream stays prepared).
   *
   * @param stream The stream.
   */
  beginCapture(stream: StreamId): Promise<void>;
  /**
   * Stops recording and stores the graph. Fails, storing nothing, with the
   * errors queued inside the window (a refused write, a stale binding, a
   * launch a dry run skipped).
   *
   * @param stream The stream.
   * @returns The graph's id. Rejects with `ServerUnhealthyError`, storing no
   * graph, when errors were queued inside the window (even if a flush there
   * already reported them).
   */
  endCapture(stream: StreamId): Promise<GraphId>;
  /**
   * Re-encodes a recorded graph (queued; failures surface at the next drain).
   *
   * @param graph The graph.
   * @param stream The stream it was captured on.
   */
  replay(graph: GraphId, stream: StreamId): void;
  /**
   * Destroys a graph; destroying twice is a no-op.
   *
   * @param graph The graph.
   * @param stream The stream it was captured on.
   */
  graphDestroy(graph: GraphId, stream: StreamId): void;
  /**
   * Ids of the initialised stream slots.
   *
   * @returns The ids of the initialised stream slots.
   */
  streamIds(): StreamId[];
  /**
   * Rebuilds the stream's dynamic pools with a new layout, only when nothing
   * is live in them; once installed, the layout is also used by streams created later.
   *
   * @param config The layout.
   * @param stream The stream.
   * @throws {InstallMemoryPoolsError} `pools-in-use` (transient).
   */
  installMemoryPools(config: MemoryConfiguration, stream: StreamId): void;
}
