/**
 * A GPU compute runtime on Deno's built-in WebGPU, implementing CubeCL's
 * `ComputeServer` contract: you write WGSL kernels, and the runtime gives you
 * pooled device memory, cheap kernel launches, streams, batched reads and
 * writes, profiling, graph capture and replay, and typed errors.
 *
 * This entry point holds what a user of the runtime needs. The contract
 * itself (`ComputeServer`, its argument and memory types, `WebGpuServer`) is
 * in `@denogpu/runtime/server`, for those who drive or implement a server
 * directly.
 *
 * ```ts
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * await using client = await createClient(); // the device goes at the end of the scope
 * const scale = defineKernel({
 *   name: "scale",
 *   wgsl: `
 *     @group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *     @group(0) @binding(1) var<storage, read> k: f32;
 *     @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
 *       if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] * k; }
 *     }`,
 * });
 * using x = client.create(new Float32Array([1, 2, 3])); // released at the end of the scope
 * client.launch(scale, [1], [x], new Float32Array([10])); // the last binding takes the info words
 * console.log(await client.read(x, Float32Array)); // Float32Array(3) [ 10, 20, 30 ]
 * ```
 *
 * Guides: the package's `README.md` and `docs/` (kernels and porting, memory,
 * reads and streams, the Worker client, devices and collectives, profiling,
 * autotune, graphs, errors).
 *
 * @module
 */

// The client and its kernels.
export { createClient } from "./src/client/create_client.ts";
export { closeDevices, listDevices } from "./src/server/device_registry.ts";
export type { ClientOptions } from "./src/client/create_client.ts";
export { ComputeClient } from "./src/client/compute_client.ts";
export type { Answer, Transport } from "./src/client/compute_client.ts";
export { WorkerClient } from "./src/client/worker_client.ts";
export { Graph } from "./src/client/graph_handle.ts";
export type {
  AllReduceOptions,
  ElementsOf,
  HostData,
  ProfileOptions,
  ProfileResult,
  Tensor,
  TypedArray,
  TypedArrayType,
  WaitOptions,
} from "./src/client/client_types.ts";
export type { ServerOptions } from "./src/options/server_options.ts";
export type { DeviceOptions } from "./src/options/server_options.ts";
export { packInfo } from "./src/client/pack_info.ts";
export { Handle } from "./src/contract/handle.ts";
export { Kernel } from "./src/contract/kernel.ts";
export type { BindingKind, KernelLayout, KernelOptions } from "./src/contract/kernel.ts";
export { defineKernel } from "./src/kernel/define_kernel.ts";
export type { DeviceProperties, DispatchTiming, InfoWords, ManagedResource } from "./src/contract/types.ts";
export type { StreamId } from "./src/ids.ts";
export type { KernelSummary } from "./src/profile/trace.ts";

// Autotune (the tuner, its stores and measurers: "@denogpu/runtime/tune").
export { anchor } from "./src/tune/anchor.ts";
export { defineTunableSet, TunableSet } from "./src/tune/tunable_set.ts";
export { AutotuneError } from "./src/errors/tune_errors.ts";

// Memory.
export type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutDescriptor,
  MemoryPoolReport,
  MemoryReport,
  MemoryUsage,
  PersistentMemoryPolicy,
  PoolConfig,
} from "./src/contract/memory_types.ts";
export { formatMemoryReport, formatMemoryUsage } from "./src/memory/memory_usage.ts";
export { formatBytes, type FormatBytesOptions } from "./src/_util/format.ts";

// Logging.
export type { LoggerOptions, LogLevel, ProfileLogLevel } from "./src/logger.ts";

// Errors.
export { DeviceLostError, DeviceValidationError, ServerError, UnsupportedError } from "./src/errors/server_errors.ts";
export { CompilationError, LaunchError, ResourceLimitError } from "./src/errors/launch_errors.ts";
export { InstallMemoryPoolsError, IoError, PoolConfigError } from "./src/errors/memory_errors.ts";
export { GraphStateError, ProfileError, ServerUnhealthyError, TraceWriteError } from "./src/errors/stream_errors.ts";
export { KernelLayoutError } from "./src/errors/kernel_errors.ts";
export { CollectiveError } from "./src/errors/collective_errors.ts";
