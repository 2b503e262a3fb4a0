/**
 * `WorkerDevice`: what the main thread keeps of one device held by a Worker:
 * the connection to it, its logical index in this thread's device directory
 * (so collectives, `listDevices` and `closeDevices` see it next to the
 * devices of this thread), its side of the collectives, and its autotuner.
 * Every `WorkerClient` of the device (one per stream) shares it.
 *
 * A worker's collectives reduce on the host: its memory is read and written
 * through the ring, and the reduction runs on this thread. `reduceOn:
 * "device"` is refused at the call; `auto` reduces on the host.
 *
 * @module
 */

import type {
  BufferBinding,
  CopyDescriptor,
  CubeCount,
  DeviceId,
  DeviceProperties,
  DispatchTiming,
  ElemType,
  KernelArguments,
  LaunchMode,
  ManagedResource,
  MemoryKind,
  ProfileDuration,
  ProfileTicks,
  ReduceOperation,
} from "../../contract/types.ts";
import type { ManagedMemory } from "../../contract/managed_memory.ts";
import type { Kernel } from "../../contract/kernel.ts";
import type { Handle } from "../../contract/handle.ts";
import type { DeviceLink, LinkLauncher } from "../../contract/device_link.ts";
import type { ServerUtilities } from "../../contract/compute_server.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryReport,
  MemoryUsage,
} from "../../contract/memory_types.ts";
import { checkDescriptor } from "../../contract/descriptors.ts";
import { checkStagingSizes } from "../../contract/handle_checks.ts";
import { DeviceLostError, UnsupportedError } from "../../errors.ts";
import type { GraphId, ProfilingToken, StreamId } from "../../ids.ts";
import { describe } from "../../_util/describe.ts";
import { resolveMemoryConfiguration } from "../../memory/memory_config.ts";
import { badDeviceIndex, directory, sameOptions } from "../../collective/device_directory.ts";
import { ServerCollectives } from "../../collective/server_collectives.ts";
import type { CollectiveHost } from "../../collective/device_reduce.ts";
import type { ServerOptions } from "../../options/server_options.ts";
import { deviceTuner } from "../../tune/device_tuner.ts";
import type { Tuner } from "../../tune/tuner.ts";
import { type ConnectionOptions, WorkerConnection } from "./connection.ts";
import { encodeValue, reviveValue } from "../wire/error_codec.ts";
import type { WireBytes, WireDescriptor, WireDuration } from "../wire/protocol.ts";
import type { RemoteMemory } from "./remote_memory.ts";
import { WRITE_INLINE_MAX } from "../wire/ring_layout.ts";
import { sharedBuffers } from "./shared_buffers.ts";

/** Sources of at least this many bytes are read into shared memory (an all-reduce of them splits its reduction). */
const SHARED_FROM = 256 * 1024;

/** Worker devices of this thread by logical index (opening or open), with the options of their first request. */
const opened = new Map<number, Promise<WorkerDevice>>();
const openedWith = new Map<number, ServerOptions>();

/** Shared copies of results delivered to workers, one per result whatever the number of workers. */
const shared = new WeakMap<Uint8Array, Uint8Array<SharedArrayBuffer>>();

function sharedCopy(bytes: Uint8Array): Uint8Array<SharedArrayBuffer> {
  let copy = shared.get(bytes);
  if (copy === undefined) {
    copy = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
    copy.set(bytes);
    shared.set(bytes, copy);
  }
  return copy;
}

/** The wire form of a descriptor of worker memory. */
export function wireDescriptor(d: CopyDescriptor): WireDescriptor {
  const { memory, offsetStart, offsetEnd } = d.binding;
  const slot = (memory as RemoteMemory).slot;
  return { slot, offsetStart, offsetEnd, shape: d.shape, strides: d.strides, elemSize: d.elemSize };
}

/** The bytes of a read's reply. */
export function bytesOf(wire: unknown): Uint8Array<ArrayBuffer>[] {
  return (wire as WireBytes[]).map((b) => new Uint8Array(b.buffer, b.offset, b.length));
}

/** What the collectives need of a device, served through the ring (host reductions only). */
class WorkerCollectiveHost implements CollectiveHost {
  #conn: WorkerConnection;

  constructor(conn: WorkerConnection) {
    this.#conn = conn;
  }

  get properties(): DeviceProperties {
    return this.#conn.properties;
  }

  checkAlive(): void {
    this.#conn.checkAlive();
  }

  read(descriptors: readonly CopyDescriptor[], stream: StreamId): Promise<Uint8Array<ArrayBuffer>[]> {
    const wire = descriptors.map(wireDescriptor);
    const bytes = descriptors.length === 1 ? checkDescriptor(descriptors[0]!, "allReduce source") : 0;
    if (bytes < SHARED_FROM) return this.#conn.call({ method: "read", stream, descriptors: wire }).then(bytesOf);
    // Large sources land in shared memory, where every worker of an all-reduce can reduce its share of them;
    // the memory is reused by later all-reduces once nothing holds it (see shared_buffers.ts).
    const into = sharedBuffers.take(bytes);
    return this.#conn.call({ method: "read", stream, descriptors: wire, into }).then(
      () => [new Uint8Array(into) as unknown as Uint8Array<ArrayBuffer>],
      (e) => {
        sharedBuffers.forget(into);
        throw e;
      },
    );
  }

  sourceDone(bytes: Uint8Array, ok: boolean): void {
    if (ok) sharedBuffers.release(bytes.buffer);
    else sharedBuffers.forget(bytes.buffer);
  }

  reduceRange(
    inputs: readonly Uint8Array[],
    reduce: { dtype: ElemType; op: ReduceOperation; from: number; to: number },
  ): Promise<void> {
    const shared = inputs.map((x) => ({
      buffer: x.buffer as SharedArrayBuffer,
      offset: x.byteOffset,
      length: x.byteLength,
    }));
    return this.#conn.call({ method: "reduceShared", inputs: shared, ...reduce }).then(() => {});
  }

  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId): void {
    // The bytes may be shared with other participants: never moved. A large one is written from shared memory,
    // which every worker receiving it copies in parallel (copied there once when it is not shared yet); pooled
    // memory stays held until the worker has run the write, which a fence queued after it answers.
    for (const [d, given] of writes) {
      const bytes = given.byteLength > WRITE_INLINE_MAX && !(given.buffer instanceof SharedArrayBuffer)
        ? sharedCopy(given)
        : given;
      const held = sharedBuffers.hold(bytes.buffer);
      this.#conn.write(d.binding, bytes, stream, false);
      if (held) {
        const buffer = bytes.buffer;
        this.#conn.call({ method: "fence" }).then(
          () => sharedBuffers.release(buffer),
          () => sharedBuffers.forget(buffer),
        );
      }
    }
  }

  initializeMemory(_memory: ManagedMemory, _size: number, _stream: StreamId): void {
    throw new UnsupportedError(HOST_ONLY);
  }

  launch(_kernel: Kernel, _count: CubeCount, _args: KernelArguments, _mode: LaunchMode, _stream: StreamId): void {
    throw new UnsupportedError(HOST_ONLY);
  }

  /** Ends the device (what `closeDevices` calls). */
  destroy(): void {
    this.#conn.destroy();
  }

  /** Resolves once the Worker's thread has exited (what `closeDevices` awaits). */
  get ended(): Promise<void> {
    return this.#conn.exited;
  }
}

const HOST_ONLY = 'a worker client\'s collectives reduce on the host (pass reduceOn "host" or "auto")';

/** A settled half of a duration as a promise again; a rejection nobody awaits is not reported as unhandled. */
function asPromise<T>(half: WireDuration["ticks"]): Promise<T> {
  if (half.ok) return Promise.resolve(half.value as T);
  const p = Promise.reject(reviveValue(half.error));
  p.catch(() => {});
  return p;
}

/**
 * The Worker link (`DeviceLink`): what the main thread keeps of one device
 * held by a Worker. Launches, allocations, frees and small writes go through
 * the connection's command ring; every other call is a message answered in
 * ring order, whose wire form and codecs are here. Its collectives reduce on
 * this thread (a Worker cannot reduce on its device for others), and its
 * autotuner runs here, measuring through the link's profiles.
 */
export class WorkerDevice implements DeviceLink {
  /** The connection to the worker. */
  readonly connection: WorkerConnection;
  /** Its collectives (host reductions), registered in this thread's directory. */
  readonly collectives: ServerCollectives;
  /** Its autotuner, on this thread: decisions per device, kept in the `tuneCache` store. */
  readonly tuner: Tuner;
  #utilities: Pick<ServerUtilities, "layoutPolicy" | "properties">;

  private constructor(connection: WorkerConnection, index: number, options: ServerOptions) {
    this.connection = connection;
    const host = new WorkerCollectiveHost(connection);
    this.collectives = new ServerCollectives(host, { index, owned: true, memoryOwner: connection, hostOnly: true });
    this.tuner = deviceTuner(connection.properties, options); // the client's tuneCache and logger, on this thread
    this.#utilities = { layoutPolicy: connection.layoutPolicy, properties: connection.properties };
  }

  /** The handles' owner: the connection. */
  get owner(): object {
    return this.connection;
  }

  /** See `DeviceLink.properties`. */
  get properties(): DeviceProperties {
    return this.connection.properties;
  }

  /** See `DeviceLink.deviceId`. */
  get deviceId(): DeviceId {
    return this.collectives.deviceId;
  }

  /** See `DeviceLink.fastReads`. */
  get fastReads(): boolean {
    return this.connection.fastReads;
  }

  /** See `DeviceLink.maxStreams`. */
  get maxStreams(): number {
    return this.connection.maxStreams;
  }

  /** See `DeviceLink.closed`. */
  get closed(): boolean {
    return this.connection.closed;
  }

  /** Resolves once the Worker has destroyed its device and closed itself. */
  get ended(): Promise<void> {
    return this.connection.ended;
  }

  /** The launch door and ring writer (the connection: no hop on the hot path). */
  get launchPath(): LinkLauncher {
    return this.connection;
  }

  /** See `DeviceLink.hostStaging`. */
  get hostStaging(): DeviceLink["hostStaging"] {
    return this.connection.hostStaging;
  }

  checkAlive(): void {
    this.connection.checkAlive();
  }

  utilities(): Pick<ServerUtilities, "layoutPolicy" | "properties"> {
    return this.#utilities;
  }

  allocate(size: number, stream: StreamId, kind: MemoryKind): Handle {
    return this.connection.alloc(size, stream, kind);
  }

  writeBytes(handle: Handle, bytes: Uint8Array, stream: StreamId, recycle: boolean): void {
    this.connection.write(handle, bytes, stream, recycle);
  }

  read(
    descriptors: readonly CopyDescriptor[],
    stream: StreamId,
    _checked: boolean,
  ): Promise<Uint8Array<ArrayBuffer>[]> {
    // Checked by the client; the Worker's host trusts what the main thread checked.
    return this.connection.call({ method: "read", stream, descriptors: descriptors.map(wireDescriptor) }).then(bytesOf);
  }

  flush(stream: StreamId): Promise<void> {
    return this.connection.call({ method: "flush", stream }) as Promise<void>;
  }

  sync(stream: StreamId): Promise<void> {
    return this.connection.call({ method: "sync", stream }) as Promise<void>;
  }

  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const conn = this.connection;
    return conn.lock.run(() => {
      conn.checkAlive();
      return fn();
    });
  }

  deviceUsage(): Promise<MemoryUsage> {
    return this.connection.call({ method: "memoryUsage" }) as Promise<MemoryUsage>;
  }

  memoryReport(stream: StreamId): Promise<MemoryReport> {
    return this.connection.call({ method: "memoryReport", stream }) as Promise<MemoryReport>;
  }

  cleanup(): void {
    this.connection.checkAlive();
    this.connection.memoryCleanup();
  }

  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void {
    this.connection.checkAlive();
    if (mode !== "auto" && mode !== "persistent") {
      throw new TypeError(`allocationMode: mode must be "auto" or "persistent", got ${describe(mode)}`);
    }
    this.connection.allocationMode(mode, stream);
  }

  /** Only the worker knows whether its pools hold live memory: `pools-in-use` rejects later; a bad layout throws here. */
  installMemoryPools(config: MemoryConfiguration, stream: StreamId): Promise<void> {
    this.connection.checkAlive();
    resolveMemoryConfiguration(config, this.connection.properties.memory);
    return this.connection.call({ method: "installMemoryPools", stream, config }) as Promise<void>;
  }

  getResource(_binding: BufferBinding, _stream: StreamId): ManagedResource {
    this.connection.checkAlive();
    throw new UnsupportedError(
      "getResource: a worker client's buffers live in its Worker and GPU objects cannot cross threads; use createClient() without worker for interop",
    );
  }

  staging(sizes: readonly number[], _stream: StreamId): Uint8Array[] {
    this.connection.checkAlive();
    return this.connection.hostStaging.lend(checkStagingSizes(sizes, this.connection.properties.memory.maxBufferSize));
  }

  dryRunDepth(delta: 1 | -1): void {
    this.connection.dryRun(delta);
  }

  startProfile(stream: StreamId): Promise<ProfilingToken> {
    return this.connection.call({ method: "startProfile", stream }) as Promise<ProfilingToken>;
  }

  /** Resolves once the duration's ticks are known (they cross settled). */
  async endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration> {
    const wire = await this.connection.call({
      method: "endProfile",
      stream,
      token: encodeValue(token),
    }) as WireDuration;
    return {
      method: wire.method,
      ticks: asPromise<ProfileTicks>(wire.ticks),
      dispatches: asPromise<readonly DispatchTiming[]>(wire.dispatches),
    };
  }

  discardProfile(stream: StreamId, token: ProfilingToken): void {
    this.connection.call({ method: "discardProfile", stream, token }).catch(() => {});
  }

  /** Logged in the Worker, by its server. */
  profileSummary(): void {}

  graphPrepare(stream: StreamId): void {
    this.connection.graphPrepare(stream);
  }

  graphAbort(stream: StreamId): void {
    this.connection.graphAbort(stream);
  }

  captureState(stream: StreamId): "none" | "prepared" | "recording" {
    return this.connection.capture(stream).state;
  }

  beginCapture(stream: StreamId): Promise<void> {
    return this.connection.call({ method: "beginCapture", stream }) as Promise<void>;
  }

  endCapture(stream: StreamId, sameAsWarmup: boolean): Promise<GraphId> {
    return this.connection.call({ method: "endCapture", stream, sameAsWarmup }) as Promise<GraphId>;
  }

  replay(graph: GraphId, stream: StreamId): void {
    this.connection.replay(graph, stream);
  }

  graphDestroy(graph: GraphId, stream: StreamId): void {
    this.connection.graphDestroy(graph, stream);
  }

  capturedGraph(_graph: GraphId): undefined {
    return undefined;
  }

  allReduce: DeviceLink["allReduce"] = (...args) => this.collectives.allReduce(...args);
  send: DeviceLink["send"] = (...args) => this.collectives.send(...args);
  recv: DeviceLink["recv"] = (...args) => this.collectives.recv(...args);
  syncCollective: DeviceLink["syncCollective"] = (stream) => this.collectives.syncCollective(stream);

  destroy(): void {
    this.connection.destroy();
  }

  /**
   * Opens logical device `index` in a Worker, or returns the one open there.
   *
   * @param options Server options (plain data; `tuneCache` stays on this thread).
   * @param connection Ring size.
   * @param index The logical index; the lowest free one when omitted.
   * @returns The device.
   * @throws {RangeError} When `index` is not an integer from 0 to 65535, or
   * belongs to a device of this thread (a `ComputeClient`'s).
   * @throws {TypeError} When the device is open and this request asks other options.
   */
  static open(options: ServerOptions, connection: ConnectionOptions, index?: number): Promise<WorkerDevice> {
    if (index !== undefined) {
      const bad = badDeviceIndex(index);
      if (bad !== null) return Promise.reject(bad);
      const known = opened.get(index);
      if (known !== undefined) {
        try {
          sameOptions(openedWith.get(index)!, options, index);
        } catch (e) {
          return Promise.reject(e);
        }
        return known;
      }
      if (directory.taken(index)) {
        return Promise.reject(
          new RangeError(
            `createClient: device ${index} is open on this thread; a worker client holds a device of its own: pass another deviceIndex`,
          ),
        );
      }
    }
    const taken = directory.take(index);
    // The tuner runs here; the worker's own (unused) keeps its decisions in memory (Workers have no localStorage).
    const opening = WorkerConnection.open({ ...options, tuneCache: "memory" }, connection).then(
      (conn) => {
        const device = new WorkerDevice(conn, taken, options);
        conn.ended.then(() => {
          device.collectives.close(new DeviceLostError(`worker device ${taken} closed`, { reason: "destroyed" }));
          if (opened.get(taken) === opening) {
            opened.delete(taken);
            openedWith.delete(taken);
          }
          if (opened.size === 0) sharedBuffers.clear(); // the last worker device of this thread is gone
        });
        return device;
      },
      (e) => {
        opened.delete(taken);
        openedWith.delete(taken);
        directory.give(taken);
        throw e;
      },
    );
    opened.set(taken, opening);
    openedWith.set(taken, options);
    return opening;
  }
}
