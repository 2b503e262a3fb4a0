/**
 * Adapter and device selection, and the device properties derived from them
 * (CubeCL's `create_server` for wgpu, section 1.20 of the contract).
 *
 * @module
 */

import { stableHash } from "../_util/hash.ts";
import { ServerError } from "../errors.ts";
import type { DeviceProperties } from "../contract/types.ts";
import type { DeviceOptions } from "../options/server_options.ts";

/** A device ready for a server. */
export interface AcquiredDevice {
  /** The adapter, or null when a device was given. */
  readonly adapter: GPUAdapter | null;
  /** The device. */
  readonly device: GPUDevice;
  /** True when the runtime created the device (and destroys it). */
  readonly owned: boolean;
  /** Properties derived from the device. */
  readonly properties: DeviceProperties;
}

const WANTED: GPUFeatureName[] = ["timestamp-query", "shader-f16"];

/**
 * Requests an adapter (falling back to the software adapter when no GPU
 * exists) and a device with the adapter's full limits and the
 * `timestamp-query`, `shader-f16` and `subgroups` features when offered.
 *
 * @param options Adapter options or an existing device.
 * @returns The device and its properties.
 * @throws {ServerError} When WebGPU is unavailable or no adapter exists.
 * @throws {TypeError} When a required feature is not offered (by the given device, or the adapter).
 */
export async function acquireDevice(options: DeviceOptions = {}): Promise<AcquiredDevice> {
  if (options.device !== undefined) {
    if (!(options.device instanceof GPUDevice)) {
      throw new TypeError(
        `createClient: device must be a GPUDevice, got ${Object.prototype.toString.call(options.device)}`,
      );
    }
    for (const f of options.requiredFeatures ?? []) {
      if (!options.device.features.has(f)) {
        throw new TypeError(`createClient: requiredFeatures lists "${f}", which the given device does not have`);
      }
    }
    return {
      adapter: null,
      device: options.device,
      owned: false,
      properties: deviceProperties(options.device, null),
    };
  }
  const gpu = (globalThis.navigator as { readonly gpu?: GPU } | undefined)?.gpu; // also a WorkerNavigator
  if (gpu === undefined) {
    throw new ServerError("WebGPU is not available: navigator.gpu is undefined in this runtime");
  }
  const adapter = (await gpu.requestAdapter(options.adapter)) ??
    (await gpu.requestAdapter({ ...options.adapter, forceFallbackAdapter: true }));
  if (adapter === null) {
    throw new ServerError(
      "no WebGPU adapter: neither a GPU nor a software adapter was found (install Mesa's llvmpipe, e.g. Debian's mesa-vulkan-drivers)",
    );
  }
  const features = WANTED.filter((f) => adapter.features.has(f));
  for (const f of options.requiredFeatures ?? []) if (!features.includes(f)) features.push(f);
  const requiredLimits: Record<string, number> = {};
  for (const key in adapter.limits) {
    const v = (adapter.limits as unknown as Record<string, unknown>)[key];
    if (typeof v === "number") requiredLimits[key] = v;
  }
  let device: GPUDevice;
  try {
    // Deno does not list "subgroups" among the adapter features, yet grants it.
    device = await adapter.requestDevice({
      label: "denogpu device",
      requiredFeatures: [...features, "subgroups" as GPUFeatureName],
      requiredLimits,
    });
  } catch {
    device = await adapter.requestDevice({ label: "denogpu device", requiredFeatures: features, requiredLimits });
  }
  return { adapter, device, owned: true, properties: deviceProperties(device, adapter) };
}

/**
 * Derives `DeviceProperties` from a device (and its adapter when known).
 *
 * @param device The device.
 * @param adapter Its adapter, or null.
 * @returns The properties.
 */
export function deviceProperties(device: GPUDevice, adapter: GPUAdapter | null): DeviceProperties {
  const l = device.limits;
  const limits: Record<string, number> = {};
  for (const key in l) {
    const v = (l as unknown as Record<string, unknown>)[key];
    if (typeof v === "number") limits[key] = v;
  }
  const all = [...device.features].sort();
  const info = (adapter?.info ?? (device as unknown as { adapterInfo?: GPUAdapterInfo }).adapterInfo) as
    | (GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number; isFallbackAdapter?: boolean })
    | undefined;
  let planeMin = info?.subgroupMinSize ?? 0;
  let planeMax = info?.subgroupMaxSize ?? 0;
  if (planeMin === 0 && planeMax === 0) {
    planeMin = 8;
    planeMax = 128;
  }
  const alignment = Math.max(l.minUniformBufferOffsetAlignment, l.minStorageBufferOffsetAlignment);
  const timestampQuery = device.features.has("timestamp-query");
  return {
    features: {
      timestampQuery,
      shaderF16: device.features.has("shader-f16"),
      subgroups: device.features.has("subgroups" as GPUFeatureName),
      all,
    },
    memory: {
      maxPageSize: l.maxStorageBufferBindingSize,
      alignment,
      maxBufferSize: l.maxBufferSize,
    },
    hardware: {
      loadWidth: 128,
      planeSizeMin: planeMin,
      planeSizeMax: planeMax,
      maxBindings: l.maxStorageBuffersPerShaderStage - 1,
      maxSharedMemorySize: l.maxComputeWorkgroupStorageSize,
      maxCubeCount: [
        l.maxComputeWorkgroupsPerDimension,
        l.maxComputeWorkgroupsPerDimension,
        l.maxComputeWorkgroupsPerDimension,
      ],
      maxUnitsPerCube: l.maxComputeInvocationsPerWorkgroup,
      maxCubeDim: [l.maxComputeWorkgroupSizeX, l.maxComputeWorkgroupSizeY, l.maxComputeWorkgroupSizeZ],
      maxVectorSize: 4,
    },
    timingMethod: timestampQuery ? "device" : "system",
    identity: {
      vendor: info?.vendor ?? "",
      architecture: info?.architecture ?? "",
      description: info?.description ?? "",
      isFallbackAdapter: info?.isFallbackAdapter ?? false,
      fingerprint: stableHash(`${all.join(",")}|${JSON.stringify(limits)}|${info?.description ?? ""}`),
    },
    limits,
  };
}
