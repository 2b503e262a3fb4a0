/**
 * `DeviceLink`: what a client needs of a device. One `ComputeClient` sits
 * over either link, as CubeCL's client sits over its device handle:
 *
 * - the in-process link is the `WebGpuServer` itself;
 * - the Worker link is the connection to a server in a Worker, which writes
 *   launches into a shared command ring and makes every other call by
 *   message (it owns the wire format and its codecs).
 *
 * The calls are the `ComputeServer` calls a client makes, with the same
 * arguments; where a Worker can only answer later, the result is
 * `T | Promise<T>`. What differs between the links is a property of the
 * transport, listed once in `ComputeClient`'s documentation.
 *
 * @module
 */

import type { GraphId, ProfilingToken, StreamId } from "../ids.ts";
import type { ServerCommunication, ServerUtilities } from "./compute_server.ts";
import type { Handle } from "./handle.ts";
import type { Kernel } from "./kernel.ts";
import type { MemoryAllocationMode, MemoryConfiguration, MemoryReport, MemoryUsage } from "./memory_types.ts";
import type {
  BufferBinding,
  CopyDescriptor,
  DeviceId,
  DeviceProperties,
  InfoWords,
  LaunchMode,
  ManagedResource,
  MemoryKind,
  ProfileDuration,
} from "./types.ts";

/** The positional launch every launch ends in (checked at its door, `checkLaunch`). */
export interface LinkLauncher {
  /**
   * Queues one launch.
   *
   * @param kernel The kernel.
   * @param buffers Storage bindings in order.
   * @param info Info words, or null.
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect Memory holding `[x, y, z]`, or null.
   * @param mode `execute` or `skip`.
   * @param stream The stream.
   * @param checked True when the door already ran (the link then skips it).
   */
  launch(
    kernel: Kernel,
    buffers: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
    mode: LaunchMode,
    stream: StreamId,
    checked: boolean,
  ): void;
}

/** A device's autotuner, as the client calls it (`src/tune/`'s `Tuner`). */
export interface LinkTuner {
  /**
   * Runs the fastest working candidate of a set for an input.
   *
   * @param set The tunable set.
   * @param input The input.
   * @param options The client's tune options with its measurer.
   * @returns What the chosen candidate returned.
   */
  // deno-lint-ignore no-explicit-any
  tune(set: any, input: unknown, options: any): Promise<unknown>;
}

/** What a client needs of a device: the in-process server, or the connection to one in a Worker. */
export interface DeviceLink extends Pick<ServerCommunication, "allReduce" | "send" | "recv" | "syncCollective"> {
  /** What the link's handles belong to (`Handle.owner`): the server, or the connection standing in for it. */
  readonly owner: object;
  /** The device's properties. */
  readonly properties: DeviceProperties;
  /** Its identity (kind and logical index). */
  readonly deviceId: DeviceId;
  /** Whether reads map early (`fastReads`, verified at start). */
  readonly fastReads: boolean;
  /** Stream slots (a stream id uses slot `id % maxStreams`). */
  readonly maxStreams: number;
  /** True once the device is lost or destroyed. */
  readonly closed: boolean;
  /** Resolves once the device is destroyed (for a Worker: once the Worker has closed itself). */
  readonly ended: Promise<void>;
  /** The launch every client launch ends in. */
  readonly launchPath: LinkLauncher;
  /** Host staging memory lent by `staging()`: whether bytes are a lent view, and taking one back. */
  readonly hostStaging: { owns(bytes: Uint8Array): boolean; recycle(bytes: Uint8Array): void };
  /** The device's autotuner. */
  readonly tuner: LinkTuner;
  /** Throws the `DeviceLostError` every call raises once the device is gone. */
  checkAlive(): void;
  /** The layout policy of tensor groups, the properties and the logger. */
  utilities(): Pick<ServerUtilities, "layoutPolicy" | "properties">;
  /**
   * Reserves memory (size checked by the caller).
   *
   * @param size Bytes.
   * @param stream The stream whose pools serve it.
   * @param kind `count` for an indirect count (12 bytes, the count pool).
   * @returns A handle owning one reference.
   */
  allocate(size: number, stream: StreamId, kind: MemoryKind): Handle;
  /**
   * Writes exactly a handle's bytes, ordered after the work queued before
   * (the client's write: the handle and the length were checked by the caller, and the link trusts them).
   *
   * @param handle The memory (checked by the caller).
   * @param bytes Its bytes.
   * @param stream The calling stream.
   * @param recycle Take a lent staging view's buffer back (or move it to the Worker, which hands it back).
   */
  writeBytes(handle: Handle, bytes: Uint8Array, stream: StreamId, recycle: boolean): void;
  /**
   * See `ComputeServer.read`.
   *
   * @param descriptors What to read.
   * @param stream The calling stream.
   * @param checked True when the caller built the descriptors from handles it checked: the link then skips
   * its door (`contract/transfer_checks.ts`), as a launch's `checked` flag does.
   * @returns The bytes of each descriptor.
   */
  read(descriptors: readonly CopyDescriptor[], stream: StreamId, checked: boolean): Promise<Uint8Array<ArrayBuffer>[]>;
  /** See `ComputeServer.flush`. */
  flush(stream: StreamId): Promise<void>;
  /** See `ComputeServer.sync`. */
  sync(stream: StreamId): Promise<void>;
  /**
   * Runs `fn` with the device held (see `ComputeClient.exclusive`).
   *
   * @param fn The section.
   * @returns What `fn` returns.
   */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Memory usage summed over every stream (later from a Worker). */
  deviceUsage(): MemoryUsage | Promise<MemoryUsage>;
  /** See `ComputeServer.memoryReport` (later from a Worker). */
  memoryReport(stream: StreamId): MemoryReport | Promise<MemoryReport>;
  /** Frees every fully free page of every stream. */
  cleanup(): void;
  /** See `ComputeServer.allocationMode`. */
  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void;
  /** See `ComputeServer.installMemoryPools` (a Worker answers later). */
  installMemoryPools(config: MemoryConfiguration, stream: StreamId): void | Promise<void>;
  /** See `ComputeServer.getResource` (refused through a Worker: GPU objects cannot cross threads). */
  getResource(binding: BufferBinding, stream: StreamId): ManagedResource;
  /** See `ComputeServer.staging`. */
  staging(sizes: readonly number[], stream: StreamId): Uint8Array[];
  /**
   * Opens (+1) or closes (-1) a dry-run window.
   *
   * @param delta +1 or -1.
   */
  dryRunDepth(delta: 1 | -1): void;
  /** See `ComputeServer.startProfile`. */
  startProfile(stream: StreamId): Promise<ProfilingToken>;
  /** See `ComputeServer.endProfile`. */
  endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration>;
  /**
   * Drops a profile whose function threw, without draining the stream.
   *
   * @param stream The stream.
   * @param token The profile.
   */
  discardProfile(stream: StreamId, token: ProfilingToken): void;
  /** Prints the profile summary after a `sync`, when the logger's profiling level asks for it. */
  profileSummary(): void;
  /** See `ComputeServer.graphPrepare`. */
  graphPrepare(stream: StreamId): void;
  /**
   * Disarms a prepared or recording capture (the captured function threw).
   *
   * @param stream The stream.
   */
  graphAbort(stream: StreamId): void;
  /**
   * A stream's capture state.
   *
   * @param stream The stream.
   * @returns `none`, `prepared` or `recording`.
   */
  captureState(stream: StreamId): "none" | "prepared" | "recording";
  /** See `ComputeServer.beginCapture`. */
  beginCapture(stream: StreamId): Promise<void>;
  /**
   * See `ComputeServer.endCapture`.
   *
   * @param stream The stream.
   * @param sameAsWarmup True to fail when the recorded launches differ from the warm-up's.
   * @returns The graph's id.
   */
  endCapture(stream: StreamId, sameAsWarmup: boolean): Promise<GraphId>;
  /** See `ComputeServer.replay`. */
  replay(graph: GraphId, stream: StreamId): void;
  /** See `ComputeServer.graphDestroy`. */
  graphDestroy(graph: GraphId, stream: StreamId): void;
  /**
   * A graph's recording and stream, for `Graph`'s replay fast path (in process only).
   *
   * @param graph The graph.
   * @returns Opaque to the client, or undefined.
   */
  capturedGraph(graph: GraphId): unknown;
  /** Destroys the device (a Worker: after the commands already queued, then it closes itself). */
  destroy(): void;
}
