/**
 * Launch arguments outside the allocation-free path: the object form of
 * `launch` (a `CubeCount` and `KernelArguments`) spread out into
 * `launchRaw`'s arguments, and the log line of a launch when launches are
 * logged.
 *
 * @module
 */

import { badCountForm } from "../contract/launch_checks.ts";
import type { StreamId } from "../ids.ts";
import type { Kernel } from "../contract/kernel.ts";
import type { ServerLogger } from "../logger.ts";
import type { BufferBinding, CubeCount, InfoWords, KernelArguments, LaunchMode } from "../contract/types.ts";

/** What `spreadLaunch` needs of the server: the allocation-free launch path, whose door checks every argument. */
export interface RawLauncher {
  /** See `WebGpuServer.launchRaw`. */
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
 * Spreads the object form of a launch (a `CubeCount` and `KernelArguments`)
 * into `launchRaw`'s arguments: a static count into `x`, `y`, `z`, a dynamic
 * one into the indirect binding. `launchRaw` checks them all at its door.
 *
 * @param server The server to launch on.
 * @param kernel The kernel.
 * @param count Workgroups to dispatch.
 * @param args Buffers and info words.
 * @param mode `execute`, or `skip` to compile and cache only.
 * @param stream The launching stream.
 * @throws {TypeError} When the count is not a `CubeCount` or `args` has no
 * buffers, and whatever the door throws (see `checkLaunch`).
 */
export function spreadLaunch(
  server: RawLauncher,
  kernel: Kernel,
  count: CubeCount,
  args: KernelArguments,
  mode: LaunchMode,
  stream: StreamId,
): void {
  const buffers = args === null || typeof args !== "object" ? undefined : args.buffers;
  const info = args?.info ?? null;
  if (count !== null && typeof count === "object" && count.kind === "static") {
    server.launchRaw(kernel, buffers!, info, count.x, count.y, count.z, null, mode, stream);
  } else if (count !== null && typeof count === "object" && count.kind === "dynamic") {
    server.launchRaw(kernel, buffers!, info, 1, 1, 1, count.binding, mode, stream);
  } else {
    badCountForm(kernel, count);
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
