/**
 * `WorkerClient`: a `ComputeClient` over the Worker link, whose server, and
 * device, live in a dedicated module Worker, so that no device wait ever
 * blocks the main thread's event loop (on Deno every `mapAsync` blocks its
 * thread until the device is idle). It adds only what is the Worker's: how
 * it starts, and its connection.
 *
 * @module
 */

// The Worker's entry, statically, so that `deno cache` and `deno compile` include the Worker's modules (the
// link starts it by URL and never imports the Worker's side).
import "../worker/host/worker_main.ts";
import type { StreamId } from "../ids.ts";
import type { ServerOptions } from "../options/server_options.ts";
import type { ConnectionOptions, WorkerConnection } from "../worker/link/connection.ts";
import { WorkerDevice } from "../worker/link/worker_device.ts";
import { ComputeClient } from "./compute_client.ts";

/**
 * A `ComputeClient` whose device is held by a Worker (`createClient({ worker:
 * true })`): the same methods, with the same semantics, ordering and errors;
 * what the transport changes is listed in `ComputeClient`'s documentation.
 * Launches, allocations, releases and small writes travel through a
 * `SharedArrayBuffer` command ring; calls that return a value travel by
 * message and resolve in ring order; data moves by transfer.
 *
 * @example The main thread stays free while the worker waits for the device
 * ```ts
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * await using client = await createClient({ worker: true });
 * const double = defineKernel({
 *   name: "double",
 *   wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *          @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] *= 2.0; }`,
 * });
 * using x = client.create(new Float32Array([1, 2, 3, 4]));
 * client.launch(double, [1], [x]);
 * console.log(await client.read(x, Float32Array)); // Float32Array(4) [2, 4, 6, 8]
 * ```
 */
export class WorkerClient extends ComputeClient<"worker"> {
  /** @ignore The Worker link (shared by the clients of every stream). */
  readonly device: WorkerDevice;

  /**
   * Internal: use `createClient({ worker: true })`.
   *
   * @param device The Worker link.
   * @param stream The stream of this client.
   * @throws {RangeError} When the stream id is not a non-negative safe integer.
   */
  constructor(device: WorkerDevice, stream: StreamId = 0) {
    super(device, stream);
    this.device = device;
  }

  /**
   * Starts a Worker and a server in it (what `createClient({ worker: true })` calls).
   *
   * @param options Server options: plain data only (no `device`).
   * @param stream The client's stream.
   * @param connection Ring size (tests and benches).
   * @param deviceIndex The logical device (see `ClientOptions.deviceIndex`): a
   * later request for an open index gets a client of the same worker.
   * @returns The client.
   * @throws {TypeError} For a `device` option (a `GPUDevice` cannot cross to the
   * Worker, which requests its own) or options that are not plain data.
   */
  static async start(
    options: ServerOptions = {},
    stream: StreamId = 0,
    connection: ConnectionOptions = {},
    deviceIndex?: number,
  ): Promise<WorkerClient> {
    if (options.device !== undefined) {
      throw new TypeError(
        "createClient: device cannot be given with worker: true: a GPUDevice cannot cross to the Worker, which requests its own (choose it with adapter options)",
      );
    }
    try {
      structuredClone(options);
    } catch (e) {
      throw new TypeError(
        `createClient: with worker: true every option must be plain data the Worker can receive (${
          (e as Error).message
        })`,
      );
    }
    return new WorkerClient(await WorkerDevice.open(options, connection, deviceIndex), stream);
  }

  /** @ignore The connection to the worker (shared by the clients of every stream). */
  get connection(): WorkerConnection {
    return this.device.connection;
  }

  /**
   * A client of the same device (and Worker) on another stream.
   *
   * @param stream The stream id.
   * @returns The client.
   * @throws {RangeError} When the id is not a non-negative safe integer.
   */
  override onStream(stream: StreamId): WorkerClient {
    return new WorkerClient(this.device, stream);
  }
}
