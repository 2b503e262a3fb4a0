/**
 * Client construction.
 *
 * @module
 */

import { checkStreamId, type StreamId } from "../ids.ts";
import type { ServerOptions } from "../server/server_options.ts";
import { WebGpuServer } from "../server/webgpu_server.ts";
import { ComputeClient } from "./compute_client.ts";
import { WorkerClient } from "./worker_client.ts";

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
  stream: true,
  worker: true,
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
 * and returns a client on it. Pass `device` to run on a device you own, or
 * `worker: true` for a `WorkerClient`, whose device lives in a Worker.
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
    throw new TypeError(`createClient: options must be an object, got ${String(options)}`);
  }
  refuseUnknownOptions(options);
  const stream = options.stream ?? 0;
  checkStreamId(stream, "createClient"); // before any device is requested
  const worker: unknown = options.worker;
  if (worker !== undefined && typeof worker !== "boolean") {
    throw new TypeError(`createClient: worker must be a boolean, got ${String(worker)}`);
  }
  if (options.worker === true) {
    const { worker: _worker, stream: _stream, ...serverOptions } = options;
    return await WorkerClient.start(serverOptions, stream);
  }
  const server = await WebGpuServer.create(options as ClientOptions);
  return new ComputeClient(server, stream);
}
