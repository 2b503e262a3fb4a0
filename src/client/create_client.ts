/**
 * Client construction.
 *
 * @module
 */

import { checkStreamId, type StreamId } from "../ids.ts";
import type { ServerOptions } from "../server/server_options.ts";
import { openDevice } from "../server/device_registry.ts";
import { WebGpuServer } from "../server/webgpu_server.ts";
import { ComputeClient } from "./compute_client.ts";

/** Options of {@linkcode createClient}: the server's, and the client's stream. */
export interface ClientOptions extends ServerOptions {
  /** Stream the client targets. @default 0 */
  stream?: StreamId;
  /**
   * The logical device: the first request for an index opens its device (a
   * `GPUDevice` of the adapter Deno offers) with the request's options; later
   * requests get a client of the same server and may not change them.
   * Destroying any of its clients (or `closeDevices`) closes the device for
   * all of them. When omitted (and no `device` is given), a fresh device at
   * the lowest free index.
   */
  deviceIndex?: number;
}

/** Every option `createClient` knows: TypeScript keeps this list complete. */
const KNOWN_OPTIONS: Readonly<Record<keyof ClientOptions, true>> = {
  adapter: true,
  device: true,
  requiredFeatures: true,
  tasksMax: true,
  maxStreams: true,
  memory: true,
  persistentMemory: true,
  logger: true,
  timing: true,
  openPassAhead: true,
  tuneCache: true,
  fastReads: true,
  stream: true,
  deviceIndex: true,
};

/**
 * Throws a `TypeError` naming the first key of `options` that `createClient`
 * does not know: JavaScript callers would otherwise see a misspelled option
 * ignored without a word.
 */
function refuseUnknownOptions(options: object): void {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(KNOWN_OPTIONS, key)) {
      const known = Object.keys(KNOWN_OPTIONS).sort().join(", ");
      throw new TypeError(`createClient: unknown option "${key}" (known options: ${known})`);
    }
  }
}

/**
 * Requests a WebGPU device (a GPU, or the software adapter when none exists)
 * and returns a client on it. Pass `deviceIndex` for logical device `n`
 * (opened by the first request, shared by later ones), or `device` to run on
 * a device you own.
 *
 * @example A client with larger batches, destroyed at the end of the scope
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 *
 * await using client = await createClient({ tasksMax: 256 });
 * console.log(client.properties.identity.description); // e.g. "NVIDIA H200" or "llvmpipe (...)"
 * ```
 *
 * @param options Device, batching, stream, memory, timing and logger options.
 * @returns The client.
 * @throws {TypeError} For an option `createClient` does not know (a misspelling), before any device is requested.
 * @throws {ServerError} When WebGPU or an adapter is unavailable.
 * @throws {PoolConfigError} For an invalid memory layout.
 * @throws {RangeError} For an invalid `stream`, `tasksMax` or `maxStreams`.
 */
export async function createClient(options: ClientOptions = {}): Promise<ComputeClient> {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`createClient: options must be an object, got ${String(options)}`);
  }
  refuseUnknownOptions(options);
  const { stream = 0, deviceIndex, ...serverOptions } = options;
  checkStreamId(stream, "createClient"); // before any device is requested
  if (deviceIndex !== undefined && serverOptions.device !== undefined) {
    throw new TypeError("createClient: pass deviceIndex or device, not both (a device you own is not numbered)");
  }
  const server = serverOptions.device !== undefined
    ? await WebGpuServer.create(serverOptions)
    : await openDevice(serverOptions, deviceIndex);
  return new ComputeClient(server, stream);
}
