/**
 * A GPU compute runtime on Deno's built-in WebGPU, implementing CubeCL's
 * `ComputeServer` contract: pooled device memory, cheap kernel launches,
 * streams, batched reads and writes, and typed errors.
 *
 * ```ts ignore
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * const client = await createClient();
 * const scale = defineKernel({
 *   name: "scale",
 *   wgsl: `
 *     @group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *     @group(0) @binding(1) var<storage, read> k: f32;
 *     @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
 *       if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] * k; }
 *     }`,
 * });
 * const x = client.create(new Float32Array([1, 2, 3]));
 * client.launch(scale, [1], [x], new Float32Array([10]));
 * console.log(new Float32Array((await client.read(x)).buffer)); // [10, 20, 30]
 * client.destroy();
 * ```
 *
 * @module
 */

export * from "./src/errors.ts";
export * from "./src/ids.ts";
export * from "./src/logger.ts";
export * from "./src/kernel/define_kernel.ts";
export * from "./src/kernel/pipeline_cache.ts";
export * from "./src/kernel/bind_group_cache.ts";
export * from "./src/contract/storage.ts";
export * from "./src/memory/webgpu_storage.ts";
export * from "./src/contract/managed_memory.ts";
export * from "./src/memory/memory_pool.ts";
export * from "./src/memory/sliced_pool.ts";
export * from "./src/memory/exclusive_pool.ts";
export * from "./src/memory/persistent_pool.ts";
export * from "./src/memory/direct_pool.ts";
export * from "./src/memory/memory_config.ts";
export * from "./src/memory/memory_manager.ts";
export * from "./src/memory/memory_usage.ts";
export * from "./src/memory/layout_policy.ts";
export * from "./src/memory/host_staging.ts";
export * from "./src/stream/device_context.ts";
export * from "./src/stream/info_arena.ts";
export * from "./src/stream/staging_pool.ts";
export * from "./src/stream/command_queue.ts";
export * from "./src/stream/speculation.ts";
export type { BindingResolver } from "./src/stream/binding_resolver.ts";
export type { DispatchPaths } from "./src/stream/dispatch_encoder.ts";
export * from "./src/stream/stream.ts";
export * from "./src/stream/stream_reader.ts";
export * from "./src/contract/types.ts";
export * from "./src/contract/handle.ts";
export * from "./src/server/device.ts";
export * from "./src/contract/compute_server.ts";
export * from "./src/contract/descriptors.ts";
export * from "./src/server/server_options.ts";
export * from "./src/server/stream_factory.ts";
export * from "./src/server/webgpu_server.ts";
export * from "./src/graph/capture_state.ts";
export * from "./src/graph/graph.ts";
export * from "./src/server/graph_registry.ts";
export * from "./src/stream/record_launch.ts";
export * from "./src/profile/timestamp_profiler.ts";
export * from "./src/profile/system_profiler.ts";
export * from "./src/stream/stream_profiles.ts";
export * from "./src/profile/trace.ts";
export * from "./src/_util/exclusive_lock.ts";
export * from "./src/client/graph_handle.ts";
export * from "./src/client/client_types.ts";
export * from "./src/client/compute_client.ts";
export * from "./src/client/create_client.ts";
export type { IndirectSource } from "./src/graph/graph.ts";
