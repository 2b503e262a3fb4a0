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
  CopyDescriptor,
  CubeCount,
  DeviceProperties,
  ElemType,
  KernelArguments,
  LaunchMode,
  ReduceOperation,
} from "../contract/types.ts";
import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { Kernel } from "../contract/kernel.ts";
import { checkDescriptor } from "../contract/descriptors.ts";
import { DeviceLostError, UnsupportedError } from "../errors.ts";
import type { StreamId } from "../ids.ts";
import { directory } from "../collective/device_directory.ts";
import { badDeviceIndex, sameOptions } from "../server/device_registry.ts";
import { ServerCollectives } from "../server/server_collectives.ts";
import type { CollectiveHost } from "../server/device_reduce.ts";
import type { ServerOptions } from "../server/server_options.ts";
import { deviceTuner } from "../tune/device_tuner.ts";
import type { Tuner } from "../tune/tuner.ts";
import { type ConnectionOptions, WorkerConnection } from "./connection.ts";
import type { WireBytes, WireDescriptor } from "./protocol.ts";
import type { RemoteMemory } from "./remote_memory.ts";
import { WRITE_INLINE_MAX } from "./ring_layout.ts";
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
    throw new UnsupportedError('a worker client\'s collectives reduce on the host (pass reduceOn "host" or "auto")');
  }

  launch(_kernel: Kernel, _count: CubeCount, _args: KernelArguments, _mode: LaunchMode, _stream: StreamId): void {
    throw new UnsupportedError('a worker client\'s collectives reduce on the host (pass reduceOn "host" or "auto")');
  }

  /** Ends the device (what `closeDevices` calls). */
  destroy(): void {
    this.#conn.destroy();
  }

  /** Resolves once the Worker's thread has exited (what `closeDevices` awaits). */
  get ended(): Promise<void> {
    return this.#conn.ended;
  }
}

/** The main thread's side of one device held by a Worker. */
export class WorkerDevice {
  /** The connection to the worker. */
  readonly connection: WorkerConnection;
  /** Its collectives (host reductions), registered in this thread's directory. */
  readonly collectives: ServerCollectives;
  /** Its autotuner, on this thread: decisions per device, kept in the `tuneCache` store. */
  readonly tuner: Tuner;

  private constructor(connection: WorkerConnection, index: number, options: ServerOptions) {
    this.connection = connection;
    const host = new WorkerCollectiveHost(connection);
    this.collectives = new ServerCollectives(host, { index, owned: true, memoryOwner: connection, hostOnly: true });
    this.tuner = deviceTuner(connection.properties, options); // the client's tuneCache and logger, on this thread
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
