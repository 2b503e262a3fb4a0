/**
 * Logical devices (CubeCL's `DeviceService::init`, once per device): device
 * `n` is one `GPUDevice` requested from the adapter Deno offers, made by the
 * first request for `n`; later requests get the same server. The runtime
 * numbers devices itself (`adapter.info` is the same for every device of an
 * adapter). Closing a device destroys its server and frees its number: the
 * next request for it makes a fresh device.
 *
 * @module
 */

import { badDeviceIndex, directory, sameOptions } from "../collective/device_directory.ts";
import { type DeviceKind, toLogicalDevice } from "../collective/device_ids.ts";
import type { ServerOptions } from "../options/server_options.ts";
import { WebGpuServer } from "./webgpu_server.ts";

interface Opening {
  readonly promise: Promise<WebGpuServer>;
  readonly options: ServerOptions;
  server: WebGpuServer | null;
}

/** Devices being opened or open, by logical index (those made through `openDevice`). */
const opened = new Map<number, Opening>();

/** The live entry of index `n`, dropping one whose server has closed since. */
function entryOf(index: number): Opening | undefined {
  const e = opened.get(index);
  if (e !== undefined && e.server !== null && e.server.closed) {
    opened.delete(index);
    return undefined;
  }
  return e;
}

/** What can be closed: a server, or a worker client's device (whose `ended` resolves once its Worker's thread has exited). */
interface Closable {
  destroy(): void;
  readonly ended?: Promise<void>;
}

/** The owner of an open numbered device that can be destroyed: a server, or a worker client's device. */
function directOwner(index: number): Closable | undefined {
  for (const e of directory.list()) {
    const d = toLogicalDevice(e.id);
    const owner = e.owner as { destroy?: unknown };
    if (d.kind !== "existing" && d.index === index && typeof owner.destroy === "function") {
      return owner as Closable;
    }
  }
  return undefined;
}

/** A server of a numbered device that `WebGpuServer.create` made directly (not through the registry). */
function directServer(index: number): WebGpuServer | undefined {
  const owner = directOwner(index);
  return owner instanceof WebGpuServer ? owner : undefined;
}

/**
 * The server of logical device `index`: made by the first request (with its
 * options), shared by later ones. Without an index, a fresh device at the
 * lowest free index.
 *
 * @param options The server's options (a later request may repeat them, not change them).
 * @param index The logical device index, or undefined for a fresh device.
 * @returns The server.
 * @throws {RangeError} For an index that is not an integer from 0 to 65535.
 * @throws {TypeError} When a later request for an open device asks other options.
 */
export function openDevice(options: ServerOptions, index?: number): Promise<WebGpuServer> {
  if (index !== undefined) {
    const bad = badDeviceIndex(index);
    if (bad !== null) return Promise.reject(bad);
    const known = entryOf(index);
    if (known !== undefined) {
      try {
        sameOptions(known.options, options, index);
      } catch (e) {
        return Promise.reject(e);
      }
      return known.promise;
    }
    const direct = directServer(index);
    if (direct !== undefined) return Promise.resolve(direct);
  }
  const taken = directory.take(index);
  const entry: Opening = {
    options,
    server: null,
    promise: WebGpuServer.create(options, taken).then(
      (server) => {
        entry.server = server;
        return server;
      },
      (e) => {
        opened.delete(taken);
        directory.give(taken);
        throw e;
      },
    ),
  };
  opened.set(taken, entry);
  return entry.promise;
}

/** An open device, as `listDevices` gives it. */
export interface DeviceListing {
  /** Its kind. */
  readonly kind: DeviceKind;
  /** Its logical index (or its number among `existing` devices). */
  readonly index: number;
  /** The adapter's description (the same for every device of one adapter). */
  readonly description: string;
}

/**
 * The open devices of this thread, by kind and index: the numbered ones and
 * those the application passed in (`existing`).
 *
 * @example Two logical devices
 * ```ts
 * import { closeDevices, createClient, listDevices } from "@denogpu/runtime";
 *
 * const a = await createClient({ deviceIndex: 0 });
 * const b = await createClient({ deviceIndex: 1 });
 * console.log(listDevices().map((d) => d.index)); // [0, 1]
 * console.log(a.deviceId.kind === b.deviceId.kind); // true: one adapter
 * await closeDevices();
 * ```
 *
 * @returns One entry per open device.
 */
export function listDevices(): DeviceListing[] {
  return directory.list().map((e) => ({ ...toLogicalDevice(e.id), description: e.description }));
}

/**
 * Closes numbered devices: destroys each one's server and device (queued work
 * is submitted, not awaited; pending reads and collectives reject), and frees
 * its index, so the next `createClient({ deviceIndex })` makes a fresh device.
 * A device held by a worker client's Worker counts as closed once that
 * Worker's thread has exited (watched where Deno lets `/proc` be read, which
 * takes `--allow-all`; else assumed 100 ms after the Worker closed); such
 * devices tear down one after another, as every worker client's do.
 * Devices still opening are closed once open. Indices that are not open are
 * skipped; devices the application passed in are left to their clients.
 *
 * @example Close one device, then all
 * ```ts
 * import { closeDevices, createClient, listDevices } from "@denogpu/runtime";
 *
 * await createClient({ deviceIndex: 0 });
 * await createClient({ deviceIndex: 1 });
 * await closeDevices(1);
 * console.log(listDevices().map((d) => d.index)); // [0]
 * await closeDevices();
 * ```
 *
 * @param devices The indices to close; every numbered device when omitted.
 * @returns Settles once they are closed.
 */
export async function closeDevices(devices?: number | readonly number[]): Promise<void> {
  const all = new Set<number>(opened.keys());
  for (const e of directory.list()) {
    const d = toLogicalDevice(e.id);
    if (d.kind !== "existing") all.add(d.index);
  }
  const wanted = devices === undefined ? [...all] : typeof devices === "number" ? [devices] : [...devices];
  await Promise.all(wanted.map(async (index) => {
    const entry = opened.get(index);
    const owner: Closable | null | undefined = entry !== undefined
      ? await entry.promise.catch(() => null)
      : directOwner(index);
    owner?.destroy();
    if (opened.get(index) === entry) opened.delete(index);
    await owner?.ended;
  }));
}
