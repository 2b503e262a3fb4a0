/**
 * Launch argument resolution outside the allocation-free path: the object
 * form of `launch` (a `CubeCount` and `KernelArguments`) checked and spread
 * out into `launchRaw`'s arguments, and the log line of a launch when
 * launches are logged.
 *
 * @module
 */

import { badArity, badBindingSize, badCount, badIndirectSize, badInfo, badMode } from "../contract/launch_checks.ts";
import type { StreamId } from "../ids.ts";
import { Kernel } from "../kernel/kernel.ts";
import type { ServerLogger } from "../logger.ts";
import { ManagedMemory } from "../contract/managed_memory.ts";
import type { BufferBinding, CubeCount, KernelArguments, LaunchMode } from "../contract/types.ts";
import type { WebGpuServer } from "./webgpu_server.ts";

/** What `spreadLaunch` needs of the server: its limits and the allocation-free `launchRaw`. */
export type RawLauncher = Pick<WebGpuServer, "properties" | "launchRaw">;

/** Throws when `b` is not a binding of some memory, or binds more than `maxBinding` bytes. */
function checkBinding(kernel: Kernel, b: unknown, where: string, maxBinding: number): BufferBinding {
  const binding = b as BufferBinding;
  if (b === null || typeof b !== "object" || !(binding.memory instanceof ManagedMemory)) {
    throw new TypeError(
      `launch(${kernel.name}) ${where}: expected a BufferBinding, got ${Object.prototype.toString.call(b)}`,
    );
  }
  const size = binding.size - binding.offsetStart - binding.offsetEnd;
  if (size > maxBinding) badBindingSize(kernel, where, size, maxBinding);
  return binding;
}

/**
 * Checks the object form of a launch and hands it to `launchRaw`: a static
 * count is spread into `x`, `y`, `z`; a dynamic one becomes the indirect
 * binding; empty info words become null. The checks are the client's: a bad
 * count, mode, info type, binding or binding count throws before anything is
 * queued (WebGPU would otherwise fail the whole batch, or truncate the count).
 *
 * @param server The server to launch on.
 * @param kernel The kernel.
 * @param count Workgroups to dispatch.
 * @param args Buffers and info words.
 * @param mode `execute`, or `skip` to compile and cache only.
 * @param stream The launching stream.
 * @throws {TypeError} When the kernel does not come from `defineKernel()`,
 * `args.buffers` is not an array of bindings, the info words are not a 32-bit
 * typed array, the bindings do not match the kernel's declarations, or the
 * mode is unknown.
 * @throws {RangeError} When a count is not a non-negative integer, or an
 * indirect count binds fewer than 12 bytes.
 * @throws {ResourceLimitError} When a count exceeds
 * `maxComputeWorkgroupsPerDimension` or a binding `maxStorageBufferBindingSize`.
 * @throws {DeviceLostError} Once the device is gone (from `launchRaw`).
 */
export function spreadLaunch(
  server: RawLauncher,
  kernel: Kernel,
  count: CubeCount,
  args: KernelArguments,
  mode: LaunchMode,
  stream: StreamId,
): void {
  if (!(kernel instanceof Kernel)) throw new TypeError("launch: kernel must come from defineKernel()");
  if (!Array.isArray(args?.buffers)) throw new TypeError(`launch(${kernel.name}): args.buffers must be an array`);
  if (mode !== "execute" && mode !== "skip") badMode(kernel);
  const { hardware, memory } = server.properties;
  const given = args.info;
  if (
    given !== undefined && given !== null &&
    !(given instanceof Uint32Array || given instanceof Float32Array || given instanceof Int32Array)
  ) badInfo(kernel);
  const info = given !== undefined && given !== null && given.length > 0 ? given : null;
  const buffers = args.buffers;
  for (let i = 0; i < buffers.length; i++) checkBinding(kernel, buffers[i], `buffer ${i}`, memory.maxPageSize);
  const declared = kernel.layout.bindings;
  if (declared !== null && declared !== buffers.length + (info === null ? 0 : 1)) {
    badArity(kernel, buffers.length, info !== null);
  }
  if (count !== null && typeof count === "object" && count.kind === "static") {
    badCount(kernel, [count.x, count.y, count.z], hardware.maxCubeCount[0], true);
    server.launchRaw(kernel, buffers, info, count.x, count.y, count.z, null, mode, stream);
  } else if (count !== null && typeof count === "object" && count.kind === "dynamic") {
    const binding = checkBinding(kernel, count.binding, "indirect count", Infinity);
    const size = binding.size - binding.offsetStart - binding.offsetEnd;
    if (size < 12) badIndirectSize(kernel, binding.memory.id, size);
    server.launchRaw(kernel, buffers, info, 1, 1, 1, binding, mode, stream);
  } else {
    throw new TypeError(`launch(${kernel.name}): count must be a CubeCount ({ kind: "static" | "dynamic", ... })`);
  }
}

/**
 * Logs one launch on the `launch` channel.
 *
 * @param logger The server's logger.
 * @param label The launching stream's label.
 * @param kernel The kernel's name.
 * @param x Workgroups along x.
 * @param y Workgroups along y.
 * @param z Workgroups along z.
 * @param skip True when the launch only compiles (`skip` mode or a dry run).
 */
export function logLaunch(
  logger: ServerLogger,
  label: string,
  kernel: string,
  x: number,
  y: number,
  z: number,
  skip: boolean,
): void {
  logger.log("launch", `${label}: executing ${kernel} [${x}, ${y}, ${z}]${skip ? " (skip)" : ""}`);
}
