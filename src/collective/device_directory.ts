/**
 * The devices of this thread and their communicators: which logical device
 * indices are taken, which devices are open (by CubeCL `DeviceId`), and one
 * `CollectiveGroup` per sorted device set, made on first use and dropped
 * when one of its devices closes.
 *
 * One directory exists per JavaScript thread (module state). A device hosted
 * in a Worker joins collectives through the directory of the thread that
 * holds its client, which registers it here like any other device.
 *
 * @module
 */

import { CollectiveError } from "../errors.ts";
import type { DeviceId } from "../contract/types.ts";
import { CollectiveGroup } from "./collective_group.ts";
import { deviceName, type LogicalDevice, sortDevices, toDeviceId, toLogicalDevice } from "./device_ids.ts";
import { describe } from "../_util/describe.ts";
import { WaitGraph } from "./wait_graph.ts";

/** An open device as the directory knows it. */
export interface DirectoryEntry {
  /** Its id. */
  readonly id: DeviceId;
  /** What holds it (the server), for the registry that shares numbered devices. */
  readonly owner: object;
  /** Its adapter's description, for listings. */
  readonly description: string;
  /** True when its collectives reduce on the host only (a worker client's device): its groups never reduce on a device. */
  readonly hostOnly?: boolean;
}

/** The devices of this thread and their communicators. */
export class DeviceDirectory {
  #open = new Map<string, DirectoryEntry>();
  #taken = new Set<number>();
  #existing = 0;
  #groups = new Map<string, CollectiveGroup>();
  /** The all-reduces waiting in every communicator, where calls over different sets are seen to differ. */
  #waits = new WaitGraph();

  /**
   * Takes a logical device index: `index`, or the lowest free one.
   *
   * @param index The index wanted, or undefined for the lowest free one.
   * @returns The index taken.
   * @throws {RangeError} When `index` is taken.
   */
  take(index?: number): number {
    if (index === undefined) {
      index = 0;
      while (this.#taken.has(index)) index++;
    } else if (this.#taken.has(index)) {
      throw new RangeError(`device ${index} is taken`);
    }
    this.#taken.add(index);
    return index;
  }

  /**
   * True when a logical device index is taken (opening or open).
   *
   * @param index The index.
   * @returns Whether it is taken.
   */
  taken(index: number): boolean {
    return this.#taken.has(index);
  }

  /**
   * Gives back a logical device index (its device closed, or failed to open).
   *
   * @param index The index.
   */
  give(index: number): void {
    this.#taken.delete(index);
  }

  /**
   * The next number among `existing` devices (devices the application owns).
   *
   * @returns A fresh number.
   */
  nextExisting(): number {
    return this.#existing++;
  }

  /**
   * Registers an open device.
   *
   * @param entry The device.
   * @throws {RangeError} When a device with its id is open.
   */
  register(entry: DirectoryEntry): void {
    const name = deviceName(entry.id);
    if (this.#open.has(name)) throw new RangeError(`device ${name} is open already`);
    this.#open.set(name, entry);
  }

  /**
   * Forgets a device that closed or was lost: every communicator it belongs
   * to fails its waiting slots with `device-lost` and is dropped.
   *
   * @param id The device.
   * @param cause Its loss.
   */
  unregister(id: DeviceId, cause: unknown): void {
    const name = deviceName(id);
    if (!this.#open.delete(name)) return;
    for (const [key, group] of this.#groups) {
      if (group.rank(id) < 0) continue;
      this.#groups.delete(key);
      group.close(id, cause);
    }
  }

  /**
   * The open device of an id.
   *
   * @param id The id.
   * @returns Its entry, or undefined.
   */
  lookup(id: DeviceId): DirectoryEntry | undefined {
    return this.#open.get(deviceName(id));
  }

  /**
   * Every open device, sorted by (type, index).
   *
   * @returns The entries.
   */
  list(): DirectoryEntry[] {
    return [...this.#open.values()].sort((a, b) => a.id.typeId - b.id.typeId || a.id.indexId - b.id.indexId);
  }

  /**
   * The id of a device a client names: a number is the open numbered device
   * of that logical index; `{ kind, index }` is taken as is.
   *
   * @param device The device.
   * @param where The call, for errors.
   * @returns Its contract id.
   * @throws {CollectiveError} `unknown-device` for a number no open device has.
   * @throws {TypeError} For anything else than a number or `{ kind, index }`.
   */
  idOf(device: number | LogicalDevice, where: string): DeviceId {
    if (typeof device === "number") {
      for (const e of this.#open.values()) {
        const d = toLogicalDevice(e.id);
        if (d.kind !== "existing" && d.index === device) return e.id;
      }
      throw new CollectiveError("unknown-device", `${where}: no device ${device} is open`, { culprit: String(device) });
    }
    if (device === null || typeof device !== "object" || !Number.isSafeInteger(device.index)) {
      throw new TypeError(`${where}: a device is a logical index or a { kind, index }, got ${describe(device)}`);
    }
    const id = toDeviceId(device);
    if (id.typeId === undefined) throw new TypeError(`${where}: unknown device kind ${String(device.kind)}`);
    return id;
  }

  /**
   * The communicator of a device set and the caller's rank in it (CubeCL's
   * `comm_init`): made on first use for the sorted set.
   *
   * @param devices The device set, in any order.
   * @param caller The calling device.
   * @param where The call, for errors.
   * @returns The group and the caller's rank.
   * @throws {CollectiveError} `unknown-device` for a device that is not open,
   * `not-a-participant` when `caller` is not in the set.
   */
  group(devices: readonly DeviceId[], caller: DeviceId, where: string): { group: CollectiveGroup; rank: number } {
    const { devices: sorted, key } = sortDevices(devices);
    for (const d of sorted) {
      if (!this.#open.has(deviceName(d))) {
        const open = this.list().map((e) => deviceName(e.id)).join(", ") || "none";
        throw new CollectiveError(
          "unknown-device",
          `${where}: device ${deviceName(d)} is not open (open devices: ${open})`,
          { culprit: deviceName(d) },
        );
      }
    }
    let group = this.#groups.get(key);
    if (group === undefined) {
      const hostOnly = sorted.some((d) => this.#open.get(deviceName(d))!.hostOnly === true);
      group = new CollectiveGroup(key, sorted, { hostOnly, waits: this.#waits });
      this.#groups.set(key, group);
    }
    const rank = group.rank(caller);
    if (rank < 0) {
      throw new CollectiveError(
        "not-a-participant",
        `${where}: the calling device ${deviceName(caller)} is not in the device set ${key}`,
        { culprit: deviceName(caller) },
      );
    }
    return { group, rank };
  }
}

/** The directory of this thread. */
export const directory: DeviceDirectory = new DeviceDirectory();

/** Largest logical device index (CubeCL's device ids are 16-bit). */
const MAX_INDEX = 0xffff;

/**
 * Checks a requested logical device index (`createClient({ deviceIndex })`).
 *
 * @param index The index.
 * @returns The error to reject with, or null when it is an integer from 0 to 65535.
 */
export function badDeviceIndex(index: number): RangeError | null {
  if (Number.isSafeInteger(index) && index >= 0 && index <= MAX_INDEX) return null;
  return new RangeError(`createClient: deviceIndex must be an integer from 0 to ${MAX_INDEX}, got ${describe(index)}`);
}

/**
 * Refuses a later request for an open device that asks other options than
 * its first (main-thread and worker devices alike).
 *
 * @param first The options the device was opened with.
 * @param later The options of this request.
 * @param index The device's logical index.
 * @throws {TypeError} Naming the first option that differs.
 */
export function sameOptions(first: object, later: object, index: number): void {
  for (const [key, value] of Object.entries(later)) {
    if (value === undefined) continue;
    const had = (first as Record<string, unknown>)[key];
    if (had !== value) {
      throw new TypeError(
        `createClient: device ${index} is open with ${key} = ${describe(had)}; this request asks ${describe(value)}. ` +
          `A device's options are fixed by its first request: leave them out, or close the device first`,
      );
    }
  }
}
