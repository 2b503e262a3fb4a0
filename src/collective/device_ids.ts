/**
 * Device identity: the `{ kind, index }` a client shows, CubeCL's
 * `DeviceId { typeId, indexId }` the contract uses, the conversions between
 * them, the sorted device set that names a communicator, and the kind of an
 * adapter (WebGPU gives no device type, and `adapter.info` is identical for
 * every device of an adapter, so the runtime numbers devices itself).
 *
 * @module
 */

import type { DeviceId, DeviceProperties } from "../contract/types.ts";
import { describe } from "../_util/describe.ts";

/**
 * The kind of a device. A device the runtime creates takes its adapter's kind
 * (`cpu` for a software adapter, `discrete` or `integrated` when the vendor
 * tells, else `unknown`); a device the application passes in with
 * `createClient({ device })` is `existing`.
 */
export type DeviceKind = "discrete" | "integrated" | "cpu" | "unknown" | "existing";

/** A device as a client names it: its kind and its index among devices of the runtime. */
export interface LogicalDevice {
  /** The kind. */
  readonly kind: DeviceKind;
  /** Its number: the logical device index (`createClient({ deviceIndex })`), or its number among `existing` devices. */
  readonly index: number;
}

/** CubeCL's type ids (0 discrete, 1 integrated, 3 cpu, 4 default, 5 existing); `unknown` is CubeCL's default. */
const TYPE_IDS: Readonly<Record<DeviceKind, number>> = {
  discrete: 0,
  integrated: 1,
  cpu: 3,
  unknown: 4,
  existing: 5,
};

const KINDS: readonly (DeviceKind | undefined)[] = ["discrete", "integrated", undefined, "cpu", "unknown", "existing"];

/**
 * The contract's id of a logical device.
 *
 * @param device The device.
 * @returns `{ typeId, indexId }`.
 */
export function toDeviceId(device: LogicalDevice): DeviceId {
  return { typeId: TYPE_IDS[device.kind], indexId: device.index };
}

/**
 * The logical device of a contract id.
 *
 * @param id The id.
 * @returns `{ kind, index }`.
 * @throws {RangeError} For a type id no device of this runtime has.
 */
export function toLogicalDevice(id: DeviceId): LogicalDevice {
  const kind = KINDS[id.typeId];
  if (kind === undefined) throw new RangeError(`device id: type ${id.typeId} is not one of this runtime's kinds`);
  return { kind, index: id.indexId };
}

/**
 * The name of a device in messages and keys: `"kind:index"`.
 *
 * @param id The device.
 * @returns For example `"cpu:1"`.
 */
export function deviceName(id: DeviceId): string {
  return `${KINDS[id.typeId] ?? `type${id.typeId}`}:${id.indexId}`;
}

/**
 * Checks a contract device id: non-negative integer type and index.
 *
 * @param id The value given.
 * @param where The call, for the error.
 * @returns The id.
 * @throws {TypeError} When it is not a `{ typeId, indexId }` of integers.
 */
export function checkDeviceId(id: unknown, where: string): DeviceId {
  const d = id as DeviceId | null;
  if (
    d === null || typeof d !== "object" || !Number.isSafeInteger(d.typeId) || !Number.isSafeInteger(d.indexId) ||
    d.typeId < 0 || d.indexId < 0
  ) {
    throw new TypeError(
      `${where}: expected a device id { typeId, indexId } of non-negative integers, got ${describe(id)}`,
    );
  }
  return d;
}

/**
 * The device set sorted by (type, index) with duplicates removed: the
 * communicator of any ordering of the same devices (CubeCL's `CommunicationId`).
 *
 * @param ids The devices.
 * @returns The sorted, distinct devices and their key.
 */
export function sortDevices(ids: readonly DeviceId[]): { devices: DeviceId[]; key: string } {
  const sorted = [...ids].sort((a, b) => a.typeId - b.typeId || a.indexId - b.indexId);
  const devices = sorted.filter((d, i) =>
    i === 0 || d.typeId !== sorted[i - 1]!.typeId || d.indexId !== sorted[i - 1]!.indexId
  );
  return { devices, key: devices.map(deviceName).join(",") };
}

/** PCI vendor ids of GPUs that are only ever discrete (NVIDIA outside Tegra) or integrated. */
const NVIDIA = 0x10de;
const INTEGRATED_VENDORS = new Set([0x8086, 0x106b, 0x13b5, 0x5143, 0x1010]); // Intel, Apple, ARM, Qualcomm, ImgTec

/**
 * The kind of a device the runtime created, from its adapter's identity:
 * `cpu` for a software adapter; `discrete` for NVIDIA (but Tegra); Intel
 * (but Arc), Apple, ARM, Qualcomm and Imagination are `integrated`; anything
 * else `unknown` (WebGPU has no device type field).
 *
 * @param identity The adapter identity of the device's properties.
 * @returns The kind.
 */
export function adapterKind(identity: DeviceProperties["identity"]): DeviceKind {
  if (identity.isFallbackAdapter) return "cpu";
  const vendor = /^\d+$/.test(identity.vendor)
    ? Number(identity.vendor)
    : /^0x[0-9a-f]+$/i.test(identity.vendor)
    ? parseInt(identity.vendor, 16)
    : -1;
  const text = `${identity.vendor} ${identity.description}`.toLowerCase();
  if (vendor === NVIDIA || text.includes("nvidia")) return /tegra|orin|xavier/.test(text) ? "integrated" : "discrete";
  if (vendor === 0x8086 || text.includes("intel")) return /\barc\b/.test(text) ? "discrete" : "integrated";
  if (INTEGRATED_VENDORS.has(vendor) || /apple|mali|adreno|powervr/.test(text)) return "integrated";
  return "unknown";
}
