/**
 * A server's side of the collectives (CubeCL's `ServerCommunication` on one
 * device): its identity in the directory, and `commInit`, `allReduce`,
 * `send`, `recv` and `syncCollective`, staged through host memory.
 *
 * - A collective reads its source through the server's read path, which
 *   encodes the copy at the call, so it sees exactly the work queued before
 *   it on the calling stream (and the streams owning the memory); reads
 *   requested in one tick share one device wait, and every participant's
 *   wait runs at the same time.
 * - The rendezvous (`CollectiveGroup`) reduces on the host or on the device
 *   of rank 0, then hands the result to each participant, which writes its
 *   destination through the server's write path (chunks with submits between
 *   above a few MiB), ordered after every use queued before on that memory.
 * - Each call returns a promise, marked handled, that settles when the
 *   result is written on this device (work issued afterwards sees it);
 *   `syncCollective` waits for every collective called before it and reports
 *   the earliest failure not yet reported.
 *
 * @module
 */

import { checkBinding, checkDescriptor, isContiguous } from "../contract/descriptors.ts";
import type {
  BufferBinding,
  CollectiveOptions,
  CopyDescriptor,
  DeviceId,
  ElemType,
  ReduceOperation,
} from "../contract/types.ts";
import { checkStreamId, type StreamId } from "../ids.ts";
import { DTYPE_SIZE, type JoinRequest } from "./collective_parts.ts";
import { directory } from "./device_directory.ts";
import { adapterKind, checkDeviceId, deviceName, type LogicalDevice, toDeviceId } from "./device_ids.ts";
import type { DeviceReduceDtype } from "./reduce_kernels.ts";
import { type CollectiveHost, reduceOnDevice, snapshotOnDevice, whole } from "./device_reduce.ts";
import { CollectiveOps } from "./collective_ops.ts";
import { describe } from "../_util/describe.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Milliseconds a collective waits for its peers unless told otherwise. */
export const DEFAULT_COLLECTIVE_TIMEOUT_MS = 30_000;

const DTYPES: readonly ElemType[] = ["f32", "i32", "u32", "f16"];
const OPS: readonly ReduceOperation[] = ["sum", "mean", "max", "min"];

function bytesOf(b: BufferBinding): number {
  return b.size - b.offsetStart - b.offsetEnd;
}

/** The collectives of one server. */
export class ServerCollectives {
  /** The device as clients name it. */
  readonly identity: LogicalDevice;
  /** The device's contract id. */
  readonly deviceId: DeviceId;
  /** Keys of the communicators this device initialised (CubeCL's `initialized_comms`). */
  readonly initialized: Set<string> = new Set();
  #host: CollectiveHost;
  #ops = new CollectiveOps();
  #numbered: boolean;
  #closed = false;
  /** What memory of this device names as its server (the host, or a worker client's connection). */
  #memoryOwner: object;
  /** Reduce on the host only (a worker client: its device cannot run this thread's kernels). */
  #hostOnly: boolean;

  /**
   * Numbers the device and registers it in this thread's directory.
   *
   * @param host The server.
   * @param device `index`: the logical index the registry took for it;
   * `owned`: false for a device the application passed in (an `existing` one);
   * `memoryOwner`: what its memory names as its server (default `host`);
   * `hostOnly`: reductions run on the host (`reduceOn: "device"` is refused).
   */
  constructor(
    host: CollectiveHost,
    device: { index?: number; owned: boolean; memoryOwner?: object; hostOnly?: boolean },
  ) {
    this.#host = host;
    this.#memoryOwner = device.memoryOwner ?? host;
    this.#hostOnly = device.hostOnly ?? false;
    this.#numbered = device.owned;
    const kind = device.owned ? adapterKind(host.properties.identity) : "existing";
    const index = device.owned ? device.index ?? directory.take() : directory.nextExisting();
    this.identity = { kind, index };
    this.deviceId = toDeviceId(this.identity);
    directory.register({
      id: this.deviceId,
      owner: host,
      description: host.properties.identity.description,
      hostOnly: this.#hostOnly,
    });
  }

  /**
   * Leaves the directory: every communicator of the device fails its waiting
   * slots with `device-lost`, and its index is free again.
   *
   * @param cause The device's loss.
   */
  close(cause: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    directory.unregister(this.deviceId, cause);
    if (this.#numbered) directory.give(this.identity.index);
  }

  /** See `ServerCommunication.commInit`. */
  commInit(devices: readonly DeviceId[]): void {
    this.#host.checkAlive();
    this.initialized.add(this.#group(devices, "commInit").group.key);
  }

  /** See `ServerCommunication.allReduce`. */
  allReduce(
    src: BufferBinding,
    dst: BufferBinding,
    dtype: ElemType,
    stream: StreamId,
    op: ReduceOperation,
    devices: readonly DeviceId[],
    options: CollectiveOptions = {},
  ): Promise<void> {
    const where = "allReduce";
    const host = this.#host;
    host.checkAlive();
    checkStreamId(stream, where);
    if (!DTYPES.includes(dtype)) {
      throw new TypeError(`${where}: dtype must be one of ${DTYPES.join(", ")}, got ${dtype}`);
    }
    if (!OPS.includes(op)) throw new TypeError(`${where}: op must be one of ${OPS.join(", ")}, got ${op}`);
    const bytes = this.#checkMemory(src, `${where} src`);
    if (this.#checkMemory(dst, `${where} dst`) !== bytes) {
      throw new RangeError(
        `${where}: src has ${formatBytesExact(bytes)} but dst has ${
          formatBytesExact(bytesOf(dst))
        }; they must be equally long`,
      );
    }
    if (bytes % DTYPE_SIZE[dtype] !== 0) {
      throw new RangeError(`${where}: ${formatBytesExact(bytes)} is not a whole number of ${dtype} elements`);
    }
    const { timeoutMs, signal, reduceOn } = this.#options(options, where);
    if (reduceOn === "device" && dtype === "f16") {
      throw new TypeError(`${where}: f16 reduces on the host; pass reduceOn "host" or "auto"`);
    }
    if (reduceOn === "device" && this.#hostOnly) {
      throw new TypeError(`${where}: a worker client's collectives reduce on the host; pass reduceOn "host" or "auto"`);
    }
    const { group, rank } = this.#group(devices, where);
    const tracked = this.#ops.open(src, dst);
    const n = group.devices.length;
    const request: JoinRequest = {
      signature: `allReduce ${dtype} ${op} ${formatBytesExact(bytes)}, reduceOn ${reduceOn}`,
      what: `allReduce of ${formatBytesExact(bytes)} ${dtype} ${op} over ${group.key}`,
      site: { reduceOn, bytes, dtype }, // a group with a host-only member reduces on the host (its directory entry)
      timeoutMs,
      signal,
      begin: (site) => {
        if (site === "device" && rank === 0) {
          // The root reduces on its device: its source is snapshot there now, in stream order.
          snapshot = tracked.read(() => Promise.resolve(snapshotOnDevice(host, src, bytes, stream)));
          snapshot.catch(() => {}); // awaited once the slot runs (see quietSource): never unhandled while it waits
        }
        return {
          kind: "all-reduce",
          dtype,
          op,
          site,
          source: snapshot !== null ? null : (source = tracked.read(() => host.read([whole(src, bytes)], stream))
            .then((out) => out[0]!)),
          deliver: (result) => tracked.write(() => host.write([[whole(dst, bytes), result]], stream)),
          reduceRange: host.reduceRange === undefined
            ? undefined
            : (inputs, from, to) => host.reduceRange!(inputs, { dtype, op, from, to }),
          reduceHere: async (others) => {
            const first = await snapshot!;
            await tracked.gates();
            const reduce = { dtype: dtype as DeviceReduceDtype, op, participants: n };
            reduceOnDevice(host, first, dst, reduce, others, stream);
            return (await host.read([whole(dst, bytes)], stream))[0]!;
          },
        };
      },
    };
    let snapshot: Promise<BufferBinding> | null = null;
    let source: Promise<Uint8Array<ArrayBuffer>> | null = null;
    const outcome = this.#ops.track(tracked, group.joinAllReduce(rank, request));
    // The snapshot is read by the reduction's first step (queued by then) or never: drop it once settled.
    // The host hears when the source bytes it read are no longer needed.
    const settled = (ok: boolean) => {
      snapshot?.then((b) => b.memory.drop(), () => {});
      source?.then((b) => host.sourceDone?.(b, ok), () => {});
    };
    outcome.then(() => settled(true), () => settled(false));
    return outcome;
  }

  /** See `ServerCommunication.send`. */
  send(
    descriptor: CopyDescriptor,
    dtype: ElemType,
    stream: StreamId,
    to: DeviceId,
    options: CollectiveOptions = {},
  ): Promise<void> {
    const where = "send";
    const host = this.#host;
    host.checkAlive();
    checkStreamId(stream, where);
    if (!DTYPES.includes(dtype)) {
      throw new TypeError(`${where}: dtype must be one of ${DTYPES.join(", ")}, got ${dtype}`);
    }
    const bytes = checkDescriptor(descriptor, where);
    this.#checkMemory(descriptor.binding, where);
    if (!isContiguous(descriptor.shape, descriptor.strides)) {
      throw new RangeError(
        `${where}: strides [${descriptor.strides}] are not contiguous for shape [${descriptor.shape}]`,
      );
    }
    const { timeoutMs, signal } = this.#options(options, where);
    const { group, rank, peer } = this.#pair(to, where);
    const tracked = this.#ops.open(descriptor.binding, null);
    const request: JoinRequest = {
      signature: `copy of ${formatBytesExact(bytes)}`,
      what: `send of ${formatBytesExact(bytes)} from ${deviceName(this.deviceId)} to ${deviceName(to)}`,
      timeoutMs,
      signal,
      begin: () => ({
        kind: "send",
        source: tracked.read(() => host.read([descriptor], stream)).then((out) => out[0]!),
      }),
    };
    return this.#ops.track(tracked, group.joinCopy(rank, peer, 0, request));
  }

  /** See `ServerCommunication.recv`. */
  recv(
    binding: BufferBinding,
    dtype: ElemType,
    stream: StreamId,
    from: DeviceId,
    options: CollectiveOptions = {},
  ): Promise<void> {
    const where = "recv";
    const host = this.#host;
    host.checkAlive();
    checkStreamId(stream, where);
    if (!DTYPES.includes(dtype)) {
      throw new TypeError(`${where}: dtype must be one of ${DTYPES.join(", ")}, got ${dtype}`);
    }
    const bytes = this.#checkMemory(binding, where);
    const { timeoutMs, signal } = this.#options(options, where);
    const { group, rank, peer } = this.#pair(from, where);
    const tracked = this.#ops.open(null, binding);
    const request: JoinRequest = {
      signature: `copy of ${formatBytesExact(bytes)}`,
      what: `recv of ${formatBytesExact(bytes)} on ${deviceName(this.deviceId)} from ${deviceName(from)}`,
      timeoutMs,
      signal,
      begin: () => ({
        kind: "recv",
        deliver: (data) => tracked.write(() => host.write([[whole(binding, bytes), data]], stream)),
      }),
    };
    return this.#ops.track(tracked, group.joinCopy(peer, rank, 1, request));
  }

  /** See `ServerCommunication.syncCollective`. */
  syncCollective(stream: StreamId): Promise<void> {
    try {
      checkStreamId(stream, "syncCollective");
      this.#host.checkAlive();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#ops.drain();
  }

  #checkMemory(b: BufferBinding, where: string): number {
    checkBinding(b, where);
    const owner = b.memory.server;
    if (owner !== null && owner !== this.#memoryOwner) {
      throw new TypeError(`${where}: memory ${b.memory.id} belongs to another device; pass memory of this device`);
    }
    return bytesOf(b);
  }

  #options(options: CollectiveOptions, where: string) {
    if (options === null || typeof options !== "object") throw new TypeError(`${where}: options must be an object`);
    const timeoutMs = options.timeout ?? DEFAULT_COLLECTIVE_TIMEOUT_MS;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0) || timeoutMs > 2 ** 31 - 1) {
      throw new RangeError(`${where}: timeout must be a number of milliseconds (0 to 2147483647), got ${timeoutMs}`);
    }
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
      throw new TypeError(`${where}: signal must be an AbortSignal`);
    }
    const reduceOn = options.reduceOn ?? "auto";
    if (reduceOn !== "auto" && reduceOn !== "host" && reduceOn !== "device") {
      throw new TypeError(`${where}: reduceOn must be "auto", "host" or "device", got ${describe(reduceOn)}`);
    }
    return { timeoutMs, signal: options.signal, reduceOn };
  }

  #group(devices: readonly DeviceId[], where: string) {
    if (!Array.isArray(devices) || devices.length === 0) {
      throw new TypeError(`${where}: devices must be a non-empty array of device ids`);
    }
    const ids = devices.map((d, i) => checkDeviceId(d, `${where} devices[${i}]`));
    const seen = new Map<string, number>();
    ids.forEach((id, i) => {
      const name = deviceName(id);
      const first = seen.get(name);
      if (first !== undefined) {
        throw new RangeError(
          `${where}: devices names ${name} twice (devices[${first}] and devices[${i}]); name each participant once`,
        );
      }
      seen.set(name, i);
    });
    return directory.group(ids, this.deviceId, where);
  }

  #pair(peer: DeviceId, where: string) {
    checkDeviceId(peer, where);
    if (peer.typeId === this.deviceId.typeId && peer.indexId === this.deviceId.indexId) {
      throw new RangeError(`${where}: a device cannot copy to itself (${deviceName(peer)}); use a kernel or write`);
    }
    const { group, rank } = this.#group([this.deviceId, peer], where);
    return { group, rank, peer: group.rank(peer) };
  }
}
