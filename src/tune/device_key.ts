/**
 * The device part of a persisted decision's key: a decision measured on one
 * adapter, or under other limits, is not used on another.
 *
 * @module
 */

import { hash64 } from "./_hash.ts";

/** What identifies a device for autotune. */
export interface TuneDeviceInfo {
  /** Adapter vendor (`GPUAdapterInfo.vendor`). */
  readonly vendor: string;
  /** Adapter architecture. */
  readonly architecture: string;
  /** Adapter description (driver and model). */
  readonly description: string;
  /** The device's limits; only those that change code generation are used (see {@linkcode CODEGEN_LIMITS}). */
  readonly limits: Readonly<Record<string, number>>;
  /** Features enabled on the device (`shader-f16`, `subgroups` change what kernels may do). */
  readonly features?: readonly string[];
  /** The runtime that compiles WGSL, e.g. `deno 2.9.6` (a new naga can change the winner). */
  readonly runtime?: string;
}

/** Limits that change which kernels are valid or how they compile. */
export const CODEGEN_LIMITS: readonly string[] = Object.freeze([
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxStorageBufferBindingSize",
  "maxStorageBuffersPerShaderStage",
  "maxBufferSize",
  "minStorageBufferOffsetAlignment",
]);

/**
 * The device key: vendor, architecture and description in clear, then a hash
 * of the code-generation limits, the features and the runtime.
 *
 * @example Usage
 * ```ts
 * import { tuneDeviceKey } from "./device_key.ts";
 * const key = tuneDeviceKey({
 *   vendor: "nvidia", architecture: "hopper", description: "NVIDIA H200",
 *   limits: { maxComputeWorkgroupStorageSize: 49152 }, runtime: "deno 2.9.6",
 * });
 * console.log(key.startsWith("nvidia/hopper/NVIDIA H200#")); // true
 * ```
 *
 * @param info The adapter's identity, the device's limits, features and runtime.
 * @returns The key.
 */
export function tuneDeviceKey(info: TuneDeviceInfo): string {
  const limits = CODEGEN_LIMITS.map((k) => `${k}=${info.limits[k] ?? "?"}`);
  const features = [...(info.features ?? [])].sort();
  const digest = hash64(JSON.stringify([limits, features, info.runtime ?? ""]));
  return `${info.vendor}/${info.architecture}/${info.description}#${digest}`;
}
