/**
 * Client construction.
 *
 * @module
 */

import { checkStreamId, type StreamId } from "../ids.ts";
import type { ServerOptions } from "../options/server_options.ts";
import { openDevice } from "../server/device_registry.ts";
import { WebGpuServer } from "../server/webgpu_server.ts";
import { ComputeClient } from "./compute_client.ts";
import { WorkerClient } from "./worker_client.ts";
import { describe } from "../_util/describe.ts";

/** Options of {@linkcode createClient}: the server's, the client's stream, and where the server runs. */
export interface ClientOptions extends ServerOptions {
  /** Stream the client targets. @default 0 */
  stream?: StreamId;
  /**
   * Where the server, and its device, run: `true` (the form of `createClient`
   * that takes `WorkerClientOptions`) runs them in a dedicated module Worker
   * and gives a `WorkerClient`, whose device waits never block this thread.
   * @default false
   */
  worker?: false;
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

/** Options of `createClient({ worker: true })`: plain data only (no `device`). */
export type WorkerClientOptions = Omit<ClientOptions, "worker" | "device"> & {
  /** Run the server in a Worker. */
  worker: true;
};

/** Every option `createClient` knows: TypeScript keeps this list complete. */
const KNOWN_OPTIONS: Readonly<Record<keyof ClientOptions | keyof WorkerClientOptions, true>> = {
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
  worker: true,
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
 * (opened by the first request, shared by later ones), `device` to run on
 * a device you own, or `worker: true` for a `WorkerClient`, whose device
 * lives in a Worker.
 *
 * @example A client with larger batches, destroyed at the end of the scope
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 *
 * await using client = await createClient({ tasksMax: 256 });
 * console.log(client.properties.identity.description); // e.g. "NVIDIA H200" or "llvmpipe (...)"
 * ```
 *
 * @example A client whose device lives in a Worker
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 *
 * await using client = await createClient({ worker: true });
 * console.log(client.constructor.name); // "WorkerClient"
 * ```
 *
 * @param options Device, batching, stream, memory, timing, logger and worker options.
 * @returns The client: a `WorkerClient` with `worker: true`, else a `ComputeClient`.
 * @throws {TypeError} For an option `createClient` does not know (a misspelling), before any device is requested.
 * @throws {ServerError} When WebGPU or an adapter is unavailable.
 * @throws {PoolConfigError} For an invalid memory layout.
 * @throws {RangeError} For an invalid `stream`, `tasksMax` or `maxStreams`.
 */
export function createClient(options: WorkerClientOptions): Promise<WorkerClient>;
/**
 * Requests a WebGPU device and returns a client on it on this thread (see the first form).
 *
 * @param options Device, batching, stream, memory, timing and logger options.
 * @returns The client.
 */
export function createClient(options?: ClientOptions): Promise<ComputeClient>;
export async function createClient(
  options: ClientOptions | WorkerClientOptions = {},
): Promise<ComputeClient | WorkerClient> {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`createClient: options must be an object, got ${describe(options)}`);
  }
  refuseUnknownOptions(options);
  const { stream = 0, deviceIndex, worker: _worker, ...rest } = options;
  const serverOptions: ServerOptions = rest;
  checkStreamId(stream, "createClient"); // before any device is requested
  const worker: unknown = options.worker;
  if (worker !== undefined && typeof worker !== "boolean") {
    throw new TypeError(`createClient: worker must be a boolean, got ${describe(worker)}`);
  }
  if (deviceIndex !== undefined && serverOptions.device !== undefined) {
    throw new TypeError("createClient: pass deviceIndex or device, not both (a device you own is not numbered)");
  }
  if (options.worker === true) {
    return await WorkerClient.start(serverOptions, stream, {}, deviceIndex);
  }
  const server = serverOptions.device !== undefined
    ? await WebGpuServer.create(serverOptions)
    : await openDevice(serverOptions, deviceIndex);
  return new ComputeClient(server, stream);
}
