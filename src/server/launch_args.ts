/**
 * Launch argument resolution outside the allocation-free path: the object
 * form of `launch` (a `CubeCount` and `KernelArguments`) checked and spread
 * out into `launchRaw`'s arguments, and the log line of a launch when
 * launches are logged.
 *
 * @module
 */

import type { StreamId } from "../ids.ts";
import { Kernel } from "../kernel/kernel.ts";
import type { ServerLogger } from "../logger.ts";
import type { InfoWords } from "../stream/info_arena.ts";
import type { BufferBinding, CubeCount, KernelArguments, LaunchMode } from "./types.ts";

/** A server with the allocation-free launch (`WebGpuServer.launchRaw`). */
export interface RawLauncher {
  /**
   * Enqueues a launch with its count and arguments spread out.
   *
   * @param kernel The kernel.
   * @param buffers Storage bindings in order.
   * @param info Non-empty info words, or null.
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect Memory holding `[x, y, z]`, or null for a static count.
   * @param mode `execute` or `skip`.
   * @param stream The launching stream.
   */
  launchRaw(
    kernel: Kernel,
    buffers: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
    mode: LaunchMode,
    stream: StreamId,
  ): void;
}

/**
 * Checks the object form of a launch and hands it to `launchRaw`: a static
 * count is spread into `x`, `y`, `z`; a dynamic one becomes the indirect
 * binding; empty info words become null.
 *
 * @param server The server to launch on.
 * @param kernel The kernel.
 * @param count Workgroups to dispatch.
 * @param args Buffers and info words.
 * @param mode `execute`, or `skip` to compile and cache only.
 * @param stream The launching stream.
 * @throws {TypeError} When the kernel does not come from `defineKernel()` or
 * `args.buffers` is not an array.
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
  const info = args.info !== undefined && args.info.length > 0 ? args.info : null;
  if (count.kind === "static") {
    server.launchRaw(kernel, args.buffers, info, count.x, count.y, count.z, null, mode, stream);
  } else {
    server.launchRaw(kernel, args.buffers, info, 1, 1, 1, count.binding, mode, stream);
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
