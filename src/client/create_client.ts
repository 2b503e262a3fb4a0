/**
 * Client construction.
 *
 * @module
 */

import { checkStreamId, type StreamId } from "../ids.ts";
import type { ServerOptions } from "../server/server_options.ts";
import { WebGpuServer } from "../server/webgpu_server.ts";
import { ComputeClient } from "./compute_client.ts";

/** Options of {@linkcode createClient}. */
export interface ClientOptions extends ServerOptions {
  /** Stream the client targets. @default 0 */
  stream?: StreamId;
}

/**
 * Requests a WebGPU device (a GPU, or the software adapter when none exists)
 * and returns a client on it. Pass `device` to wrap a device you own.
 *
 * @example Usage
 * ```ts ignore
 * import { createClient } from "@denogpu/runtime";
 * const client = await createClient({ tasksMax: 256 });
 * console.log(client.properties.identity.description);
 * client.destroy();
 * ```
 *
 * @param options Device, batching, stream, memory and logger options.
 * @returns The client.
 * @throws {ServerError} When WebGPU or an adapter is unavailable.
 * @throws {PoolConfigError} For an invalid memory layout.
 * @throws {RangeError} For an invalid `stream`, `tasksMax` or `maxStreams`.
 */
export async function createClient(options: ClientOptions = {}): Promise<ComputeClient> {
  const stream = options.stream ?? 0;
  checkStreamId(stream, "createClient"); // before any device is requested
  const server = await WebGpuServer.create(options);
  return new ComputeClient(server, stream);
}
