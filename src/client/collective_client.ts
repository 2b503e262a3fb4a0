/**
 * `CollectiveClient`: the part of a client that works across devices: its
 * device's identity, all-reduce, send and receive, the collective sync, and
 * copies to another client. `ComputeClient` extends it.
 *
 * @module
 */

import type { Handle } from "../contract/handle.ts";
import { checkHandle } from "../contract/handle_checks.ts";
import type { CollectiveOptions, ElemType, ReduceOperation } from "../contract/types.ts";
import { directory } from "../collective/device_directory.ts";
import { type LogicalDevice, toLogicalDevice } from "../collective/device_ids.ts";
import { MemoryClient } from "./memory_client.ts";

/** Options of {@linkcode CollectiveClient.allReduce}. */
export interface AllReduceOptions extends CollectiveOptions {
  /** Element type: `f32`, `i32`, `u32` or `f16`; the element count is the byte count over its size. */
  dtype: ElemType;
  /** The reduction. @default "sum" */
  op?: ReduceOperation;
  /**
   * The participants, this device among them, each once: logical indices, or
   * `{ kind, index }` (e.g. `existing` devices). Every participant names the
   * same set; a device named twice is refused at the call (`RangeError`).
   */
  devices: readonly (number | LogicalDevice)[];
}

/**
 * The cross-device half of a `ComputeClient` (what `createClient()`
 * returns). Devices are numbered by the runtime: `createClient({ deviceIndex })`.
 *
 * Collectives are queued, not awaited: each call returns at once with a
 * promise (marked handled, so ignoring it is safe) that settles when this
 * device's part is done, and `syncCollective()` waits for every collective
 * this device called before it and reports the earliest failure. In one
 * thread, make every device's calls first and await afterwards: a device's
 * collective completes only once every participant has called it.
 *
 * @example All-reduce over two devices in one thread
 * ```ts
 * import { closeDevices, createClient } from "@denogpu/runtime";
 *
 * const clients = [await createClient({ deviceIndex: 0 }), await createClient({ deviceIndex: 1 })];
 * const xs = clients.map((c, i) => c.create(new Float32Array([i + 1, 10 * (i + 1)])));
 * clients.forEach((c, i) => c.allReduce(xs[i]!, xs[i]!, { dtype: "f32", op: "sum", devices: [0, 1] }));
 * await Promise.all(clients.map((c) => c.syncCollective()));
 * console.log(await clients[1]!.read(xs[1]!, Float32Array)); // Float32Array(2) [3, 30]
 * await closeDevices();
 * ```
 */
export class CollectiveClient extends MemoryClient {
  /** The device: its kind and its logical index (`createClient({ deviceIndex })`). */
  get deviceId(): LogicalDevice {
    return toLogicalDevice(this.server.deviceId);
  }

  /**
   * Reduces `src` over every device of `devices` into `dst` (CubeCL's
   * `all_reduce`). Every participant makes the same call: the sorted set
   * names the communicator, and each device's `n`-th collective on it joins
   * slot `n`. The source is read as the work queued before the call left it;
   * `dst` holds the result once the returned promise resolves (work issued
   * after that, or after `syncCollective()`, sees it). Until then, leave
   * `dst` alone. Like a `read`, reading the source raises the errors queued
   * on the stream before the call: the collective then fails with
   * `device-error`, their `ServerUnhealthyError` as its cause.
   *
   * @param src The memory reduced.
   * @param dst Where the result goes, as long as `src` (may be `src`).
   * @param options Element type, reduction, participants; timeout, abort signal, where to reduce.
   * @returns Resolves once `dst` holds the result; rejects with `CollectiveError` (also reported by `syncCollective`).
   * @throws {TypeError} {RangeError} For a bad handle, element type, reduction or size, or a device named twice
   * in `devices`, before anything is queued.
   * @throws {CollectiveError} `unknown-device` or `not-a-participant`, at once.
   */
  allReduce(src: Handle, dst: Handle, options: AllReduceOptions): Promise<void> {
    if (options === null || typeof options !== "object") throw new TypeError("allReduce: options must be an object");
    const s = checkHandle(this.server, src, "allReduce src");
    const d = checkHandle(this.server, dst, "allReduce dst");
    if (!Array.isArray(options.devices)) throw new TypeError("allReduce: devices must be an array");
    const devices = options.devices.map((x, i) => directory.idOf(x, `allReduce devices[${i}]`));
    const { dtype, op = "sum", devices: _, ...rest } = options;
    return this.server.allReduce(s, d, dtype, this.stream, op, devices, rest);
  }

  /**
   * Waits for every collective this device called before it (all-reduces,
   * sends, receives); work issued after it resolves sees their results
   * (CubeCL's `sync_collective`).
   *
   * @returns Rejects with the earliest `CollectiveError` not yet reported by a `syncCollective`.
   */
  syncCollective(): Promise<void> {
    return this.server.syncCollective(this.stream);
  }

  /**
   * Sends `handle`'s bytes to device `to`, which takes them with `recv` (its
   * `n`-th receive from this device meets this device's `n`-th send to it).
   *
   * @param handle The memory sent, read as the work queued before the call left it.
   * @param to The receiving device: a logical index or `{ kind, index }`.
   * @param options Timeout and abort signal.
   * @returns Resolves once the receiver has written the bytes; rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} {CollectiveError} For a bad handle or device, at once.
   */
  send(handle: Handle, to: number | LogicalDevice, options: CollectiveOptions = {}): Promise<void> {
    const h = checkHandle(this.server, handle, "send");
    const peer = directory.idOf(to, "send");
    const descriptor = { binding: h, shape: [h.sizeInUse], strides: [1], elemSize: 1 };
    return this.server.send(descriptor, "u32", this.stream, peer, options);
  }

  /**
   * Receives the bytes device `from` sends into `handle`, which must be as
   * long as what is sent.
   *
   * @param handle Where the bytes go; leave it alone until the promise resolves.
   * @param from The sending device: a logical index or `{ kind, index }`.
   * @param options Timeout and abort signal.
   * @returns Resolves once the bytes are written (work issued after it sees them); rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} {CollectiveError} For a bad handle or device, at once.
   */
  recv(handle: Handle, from: number | LogicalDevice, options: CollectiveOptions = {}): Promise<void> {
    const h = checkHandle(this.server, handle, "recv");
    return this.server.recv(h, "u32", this.stream, directory.idOf(from, "recv"), options);
  }

  /**
   * Copies `handle` to another client's device through the host (CubeCL's
   * `to_client`): read here, then written there in chunks of a few MiB.
   *
   * @example Copy between two devices
   * ```ts
   * import { closeDevices, createClient } from "@denogpu/runtime";
   *
   * const a = await createClient({ deviceIndex: 0 });
   * const b = await createClient({ deviceIndex: 1 });
   * const x = a.create(new Float32Array([0, 1, 2, 3, 4, 5]));
   * const y = await a.toClient(x, b);
   * console.log(await b.read(y, Float32Array)); // Float32Array(6) [0, 1, 2, 3, 4, 5]
   * await closeDevices();
   * ```
   *
   * @param handle The memory, read as the work queued before the call left it.
   * @param other The client receiving the copy: of any device, this one
   * included, or any client with `create` (a client hosted in a Worker).
   * @returns A new handle of `other` holding the bytes; work issued on it afterwards sees them.
   */
  async toClient(handle: Handle, other: Pick<MemoryClient, "create">): Promise<Handle> {
    if (typeof other?.create !== "function") throw new TypeError("toClient: other must be a client");
    const bytes = await this.read(checkHandle(this.server, handle, "toClient"));
    return other.create(bytes);
  }
}
