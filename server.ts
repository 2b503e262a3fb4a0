/**
 * The `ComputeServer` contract, for those who drive or implement a server
 * directly: CubeCL's trait, camelCased (`ComputeServer`,
 * `ServerCommunication`, `DeviceService`), its argument, memory, profiling and
 * device types, the memory descriptors a server binds, and `WebGpuServer`,
 * the implementation on Deno's WebGPU that every `ComputeClient` drives
 * (`client.server`).
 *
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 * import type { ComputeServer } from "@denogpu/runtime/server";
 *
 * const client = await createClient();
 * const server: ComputeServer = client.server;
 * console.log(server.streamIds()); // [0]
 * client.destroy();
 * ```
 *
 * @module
 */

// The contract.
export type {
  ComputeServer,
  DeviceService,
  ServerCommunication,
  ServerUtilities,
} from "./src/contract/compute_server.ts";
export type {
  BufferBinding,
  CollectiveOptions,
  CopyDescriptor,
  CubeCount,
  CubeDim,
  DeviceId,
  ElemType,
  ExecutionMode,
  HardwareProperties,
  KernelArguments,
  LaunchMode,
  MemoryKind,
  ProfileDuration,
  ProfileTicks,
  ReduceOperation,
  TimingMethod,
} from "./src/contract/types.ts";
export type {
  LayoutPlan,
  LayoutStrategy,
  MemoryLayoutPolicy,
  PoolShape,
  TensorPlacement,
} from "./src/contract/memory_types.ts";
export { ManagedMemory } from "./src/contract/managed_memory.ts";
export type { GraphId, ProfilingToken } from "./src/ids.ts";
export { ServerLogger } from "./src/logger.ts";
export type { LogSink } from "./src/logger.ts";

export type { WorkerClientOptions } from "./src/client/create_client.ts";
export type { DeviceLink, LinkLauncher, LinkTuner } from "./src/contract/device_link.ts";

// Devices.
export type { DeviceKind, LogicalDevice } from "./src/collective/device_ids.ts";
export type { DeviceListing } from "./src/server/device_registry.ts";

// The WebGPU server.
export { WebGpuServer } from "./src/server/webgpu_server.ts";
export type { ServerOptions } from "./src/options/server_options.ts";
export type { DeviceOptions } from "./src/options/server_options.ts";

// Error kinds.
export type { KernelLayoutErrorKind } from "./src/errors/kernel_errors.ts";
export type { LaunchErrorKind, ResourceLimitKind } from "./src/errors/launch_errors.ts";
export type { InstallMemoryPoolsErrorKind, IoErrorKind, PoolConfigErrorKind } from "./src/errors/memory_errors.ts";
export type { ProfileErrorKind } from "./src/errors/stream_errors.ts";
export type { CollectiveErrorReason } from "./src/errors/collective_errors.ts";
