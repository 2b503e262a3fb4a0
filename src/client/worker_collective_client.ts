/**
 * `WorkerCollectiveClient`: the cross-device half of a `WorkerClient`: its
 * device's identity in this thread's directory, all-reduce, send and
 * receive, the collective sync, and copies to another client. The same
 * semantics as `CollectiveClient`; a worker's memory is read and written
 * through its ring, so several worker clients wait for their devices in
 * parallel while this thread stays free, and an all-reduce among worker
 * clients splits its reduction between their threads.
 *
 * @module
 */

import type { Handle } from "../contract/handle.ts";
import { checkHandle } from "../contract/handle_checks.ts";
import type { CollectiveOptions } from "../contract/types.ts";
import { directory } from "../collective/device_directory.ts";
import { type LogicalDevice, toLogicalDevice } from "../collective/device_ids.ts";
import type { AllReduceOptions } from "./collective_client.ts";
import type { MemoryClient } from "./memory_client.ts";
import { WorkerMemoryClient } from "./worker_memory_client.ts";

/**
 * The cross-device half of a `WorkerClient`. Worker clients take part in
 * collectives with each other and with `ComputeClient`s of this thread;
 * they reduce on the host (`reduceOn: "device"` is refused; `auto` reduces
 * on the host). When every participant is a worker client and the sources
 * hold 256 KiB or more, each worker reduces 1/N of the elements in shared
 * memory; a mixed group reduces on this thread.
 *
 * @example All-reduce over two worker clients, each device in its own Worker
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 *
 * await using a = await createClient({ worker: true, deviceIndex: 0 });
 * await using b = await createClient({ worker: true, deviceIndex: 1 });
 * const xa = a.create(new Float32Array([1, 10]));
 * const xb = b.create(new Float32Array([2, 20]));
 * a.allReduce(xa, xa, { dtype: "f32", devices: [0, 1] });
 * b.allReduce(xb, xb, { dtype: "f32", devices: [0, 1] });
 * await Promise.all([a.syncCollective(), b.syncCollective()]);
 * console.log(await b.read(xb, Float32Array)); // Float32Array(2) [3, 30]
 * ```
 */
export class WorkerCollectiveClient extends WorkerMemoryClient {
  /** The device: its kind and its logical index (`createClient({ worker: true, deviceIndex })`). */
  get deviceId(): LogicalDevice {
    return toLogicalDevice(this.device.collectives.deviceId);
  }

  /**
   * Reduces `src` over every device of `devices` into `dst` (see
   * `CollectiveClient.allReduce`), on the host.
   *
   * @param src The memory reduced, read as the work queued before the call left it.
   * @param dst Where the result goes, as long as `src` (may be `src`).
   * @param options Element type, reduction, participants; timeout, abort signal.
   * @returns Resolves once `dst` holds the result; rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} For a bad handle, element type, reduction,
   * size, `reduceOn: "device"`, or a device named twice in `devices`, before anything is queued.
   * @throws {CollectiveError} `unknown-device` or `not-a-participant`, at once.
   */
  allReduce(src: Handle, dst: Handle, options: AllReduceOptions): Promise<void> {
    if (options === null || typeof options !== "object") throw new TypeError("allReduce: options must be an object");
    const s = checkHandle(this.connection, src, "allReduce src");
    const d = checkHandle(this.connection, dst, "allReduce dst");
    if (!Array.isArray(options.devices)) throw new TypeError("allReduce: devices must be an array");
    const devices = options.devices.map((x, i) => directory.idOf(x, `allReduce devices[${i}]`));
    const { dtype, op = "sum", devices: _, ...rest } = options;
    return this.device.collectives.allReduce(s, d, dtype, this.stream, op, devices, rest);
  }

  /**
   * Waits for every collective this device called before it (see `CollectiveClient.syncCollective`).
   *
   * @returns Rejects with the earliest `CollectiveError` not yet reported by a `syncCollective`.
   */
  syncCollective(): Promise<void> {
    return this.device.collectives.syncCollective(this.stream);
  }

  /**
   * Sends `handle`'s bytes to device `to`, which takes them with `recv`.
   *
   * @param handle The memory sent, read as the work queued before the call left it.
   * @param to The receiving device: a logical index or `{ kind, index }`.
   * @param options Timeout and abort signal.
   * @returns Resolves once the receiver has written the bytes; rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} {CollectiveError} For a bad handle or device, at once.
   */
  send(handle: Handle, to: number | LogicalDevice, options: CollectiveOptions = {}): Promise<void> {
    const h = checkHandle(this.connection, handle, "send");
    const peer = directory.idOf(to, "send");
    const descriptor = { binding: h, shape: [h.sizeInUse], strides: [1], elemSize: 1 };
    return this.device.collectives.send(descriptor, "u32", this.stream, peer, options);
  }

  /**
   * Receives the bytes device `from` sends into `handle`.
   *
   * @param handle Where the bytes go, as long as what is sent; leave it alone until the promise resolves.
   * @param from The sending device: a logical index or `{ kind, index }`.
   * @param options Timeout and abort signal.
   * @returns Resolves once the bytes are written (work issued after it sees them); rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} {CollectiveError} For a bad handle or device, at once.
   */
  recv(handle: Handle, from: number | LogicalDevice, options: CollectiveOptions = {}): Promise<void> {
    const h = checkHandle(this.connection, handle, "recv");
    return this.device.collectives.recv(h, "u32", this.stream, directory.idOf(from, "recv"), options);
  }

  /**
   * Copies `handle` to another client's device through this thread (see `CollectiveClient.toClient`).
   *
   * @param handle The memory, read as the work queued before the call left it.
   * @param other The client receiving the copy (of any device, or any client with `create`).
   * @returns A new handle of `other` holding the bytes.
   */
  async toClient(handle: Handle, other: Pick<MemoryClient, "create">): Promise<Handle> {
    if (typeof other?.create !== "function") throw new TypeError("toClient: other must be a client");
    return other.create(await this.read(handle));
  }
}
