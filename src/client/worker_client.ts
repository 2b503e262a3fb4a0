/**
 * `WorkerClient`: a client whose server, and device, live in a dedicated
 * module Worker, so that no device wait ever blocks the main thread's event
 * loop (on Deno every `mapAsync` blocks its thread until the device is idle).
 *
 * Launches, allocations, releases and writes travel through a
 * `SharedArrayBuffer` command ring (handles by id, info words inline); calls
 * that return a value travel by message and resolve in ring order; data
 * moves by transfer. Every argument is checked here, by the same checks as a
 * main-thread client's, so argument errors throw at the call; device-side
 * errors are queued in the worker and raised by the same draining calls, as
 * the same classes.
 *
 * @module
 */

import { Handle } from "../contract/handle.ts";
import type { Kernel } from "../contract/kernel.ts";
import { badCountForm, checkLaunch } from "../contract/launch_checks.ts";
import type { BufferBinding, CubeCount, InfoWords, LaunchMode, ProfileDuration } from "../contract/types.ts";
import { ServerError } from "../errors.ts";
import type { ProfilingToken, StreamId } from "../ids.ts";
import type { ServerOptions } from "../server/server_options.ts";
import type { ConnectionOptions } from "../worker/connection.ts";
import { WorkerDevice } from "../worker/worker_device.ts";
import { captureOn, endProfileOn, profileOn } from "./_worker_sections.ts";
import type { ProfileOptions, ProfileResult } from "./client_types.ts";
import { Graph } from "./graph_handle.ts";
import { WorkerCollectiveClient } from "./worker_collective_client.ts";
import type { JsonValue, TunableSet } from "../tune/tunable_set.ts";
import type { TuneOptions } from "../tune/tuner.ts";
import type { TuneMeasurer } from "../tune/measurer.ts";
import { profileMeasurer } from "../tune/profile_measurer.ts";

/**
 * The client of one device held by a Worker, bound to one stream: the
 * methods of `ComputeClient`, with the same semantics, ordering and errors,
 * except where a value can only come from the worker:
 *
 * | `ComputeClient` | `WorkerClient` |
 * |---|---|
 * | `memoryUsage(): MemoryUsage` | `memoryUsage(): Promise<MemoryUsage>` |
 * | `memoryReport(): MemoryReport` | `memoryReport(): Promise<MemoryReport>` |
 * | `installMemoryPools(c): void` (throws `pools-in-use`) | `installMemoryPools(c): Promise<void>` (rejects with it; a bad layout still throws at the call) |
 * | `getResource(h)` | throws `UnsupportedError`: GPU objects cannot cross threads |
 * | `empty(n)` throws `IoError` when no pool can serve it | that `IoError` is raised by the next draining call (`flush`, `sync`, `read`) |
 * | `server` (the `WebGpuServer`) | none: the server is in the worker |
 * | `destroy()` | also ends the Worker; `ended` resolves once it has closed |
 * | `allReduce` reduces on the host or the device | on the host: `reduceOn: "device"` is refused at the call |
 * | `autotune` uses the server's tuner | the tuner runs on this thread, measuring with this client's profiles |
 *
 * A live worker client keeps the process alive: destroy it (or use
 * `await using`). Make one with `createClient({ worker: true })`.
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
export class WorkerClient extends WorkerCollectiveClient implements Disposable, AsyncDisposable {
  /** Measures autotune rounds on this client's stream (made on first use). */
  #measurer: TuneMeasurer | null = null;

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

  /** Resolves once the Worker has destroyed its device and closed (after `destroy()`, or a device loss). */
  get ended(): Promise<void> {
    return this.connection.ended;
  }

  /**
   * A client of the same device (and Worker) on another stream.
   *
   * @param stream The stream id.
   * @returns The client.
   * @throws {RangeError} When the id is not a non-negative safe integer.
   */
  onStream(stream: StreamId): WorkerClient {
    return new WorkerClient(this.device, stream);
  }

  /**
   * Queues a kernel launch (see `ComputeClient.launch`): checked here, then
   * written into the command ring.
   *
   * @param kernel The kernel (its source is sent to the worker once).
   * @param count Workgroups `[x, y?, z?]`, or a handle (or dynamic `CubeCount`) holding three u32.
   * @param buffers One handle per buffer the kernel binds, in `(group, binding)` order.
   * @param info Info words for the kernel's last binding (see `packInfo`).
   * @param options `{ mode: "skip" }` compiles and caches without dispatching.
   * @throws {TypeError} {RangeError} {ResourceLimitError} For a bad argument, before anything is queued.
   */
  launch(
    kernel: Kernel,
    count: readonly number[] | Handle | CubeCount,
    buffers: readonly Handle[],
    info?: InfoWords,
    options?: { mode?: LaunchMode },
  ): void {
    // The count is taken apart here and in ComputeClient.launch alike: a shared helper filling a scratch object
    // read 3-6% slower per launch on the H200 (bench/RESULTS.md, run 31).
    let x = 1;
    let y = 1;
    let z = 1;
    let indirect: BufferBinding | null = null;
    if (Array.isArray(count)) {
      const n = count.length;
      if (n < 1 || n > 3) badCountForm(kernel, count);
      x = count[0]!;
      if (n > 1) {
        y = count[1]!;
        if (n > 2) z = count[2]!;
      }
    } else if (count instanceof Handle) {
      indirect = count;
    } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "static") {
      const c = count as { x: number; y: number; z: number };
      x = c.x;
      y = c.y;
      z = c.z;
    } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "dynamic") {
      indirect = (count as { binding: BufferBinding }).binding;
    } else {
      badCountForm(kernel, count);
    }
    const mode = options === undefined ? "execute" : options.mode ?? "execute";
    const conn = this.connection;
    const words = info ?? null;
    checkLaunch(conn.limits, kernel, buffers, words, x, y, z, indirect, mode);
    conn.checkAlive();
    if (indirect === null && (x === 0 || y === 0 || z === 0)) return;
    conn.launch(
      kernel,
      buffers,
      words !== null && words.length === 0 ? null : words,
      x,
      y,
      z,
      indirect,
      mode,
      this.stream,
    );
  }

  /**
   * Submits queued work and raises queued errors, without waiting for the device.
   *
   * @returns Rejects with `ServerUnhealthyError` when errors were queued.
   */
  flush(): Promise<void> {
    return this.connection.call({ method: "flush", stream: this.stream }) as Promise<void>;
  }

  /**
   * Waits until the device has run everything submitted, then raises queued errors.
   *
   * @returns Rejects with `ServerUnhealthyError` when errors were queued.
   */
  sync(): Promise<void> {
    return this.connection.call({ method: "sync", stream: this.stream }) as Promise<void>;
  }

  /**
   * Runs `fn` with the device held: other sections and profiles of this
   * device wait; nested calls run at once. An exception in `fn` becomes a
   * `ServerError` naming it.
   *
   * @param fn The section.
   * @returns What `fn` returns; rejects with `DeviceLostError`, without running `fn`, once the device is gone.
   */
  async exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const conn = this.connection;
    try {
      return await conn.lock.run(() => {
        conn.checkAlive();
        return fn();
      });
    } catch (e) {
      if (e instanceof ServerError) throw e;
      const message = e instanceof Error ? e.message : String(e);
      throw new ServerError(`exclusive: the section threw: ${message}`, { cause: e });
    }
  }

  /**
   * Opens a profile on this stream; `profile()` is the usual way.
   *
   * @returns A token for `endProfile`.
   */
  startProfile(): Promise<ProfilingToken> {
    return this.connection.call({ method: "startProfile", stream: this.stream }) as Promise<ProfilingToken>;
  }

  /**
   * Closes a profile opened by `startProfile`. It resolves once the
   * duration's ticks are known (they cross settled).
   *
   * @param token The token.
   * @returns The duration; rejects with `ProfileError` for an unknown or ended token.
   */
  endProfile(token: ProfilingToken): Promise<ProfileDuration> {
    return endProfileOn(this.connection, this.stream, token);
  }

  /**
   * Runs `fn` and measures the device work it queues on this stream (see `ComputeClient.profile`).
   *
   * @param fn The work to measure.
   * @param options `trace` writes a Chrome trace (Perfetto) of the dispatches, from the main thread.
   * @returns The result and the measurements.
   */
  profile<T>(fn: () => T | Promise<T>, options: ProfileOptions = {}): Promise<ProfileResult<T>> {
    return profileOn(this.connection, this.stream, fn, options);
  }

  /**
   * Arms graph capture (see `ComputeClient.graphPrepare`).
   *
   * @throws {GraphStateError} When already armed or recording, or inside a dry run.
   */
  graphPrepare(): void {
    this.connection.graphPrepare(this.stream);
  }

  /**
   * Starts recording after a warm-up.
   *
   * @returns Resolves once recording has started; rejects with the warm-up's queued errors.
   */
  beginCapture(): Promise<void> {
    return this.connection.call({ method: "beginCapture", stream: this.stream }) as Promise<void>;
  }

  /**
   * Stops recording.
   *
   * @returns The graph recorded since `beginCapture`.
   */
  async endCapture(): Promise<Graph> {
    const id = await this.connection.call({ method: "endCapture", stream: this.stream }) as number;
    return new Graph(this.connection, this.stream, id);
  }

  /**
   * Captures `fn` as a graph (see `ComputeClient.capture`).
   *
   * @param fn The work to capture (the same launches both times).
   * @returns The graph; `replay()` it, and `destroy()` it when done.
   */
  async capture(fn: () => unknown): Promise<Graph> {
    return new Graph(this.connection, this.stream, await captureOn(this.connection, this.stream, fn));
  }

  /**
   * Runs the fastest working candidate of `set` for `input` (see
   * `ComputeClient.autotune`). The tuner runs on this thread and measures
   * with this client's profiles; the device's `tuneCache` store is read and
   * written here.
   *
   * @param set The candidates (`defineTunableSet`).
   * @param input The operation's input; `set.key(input)` names the decision.
   * @param options `signal` cancels the wait; `onProgress` receives the tuning's progress.
   * @returns What the chosen candidate returned.
   * @throws {AutotuneError} When no candidate works, listing each one's failure.
   */
  autotune<In, Out, K extends JsonValue>(
    set: TunableSet<In, Out, K>,
    input: In,
    options: TuneOptions = {},
  ): Promise<Out> {
    this.#measurer ??= profileMeasurer(this);
    return this.device.tuner.tune(set, input, { ...options, measurer: this.#measurer });
  }

  /**
   * Destroys the device after the commands already queued, then ends the
   * Worker (from inside: the device is destroyed there, then the Worker
   * closes itself). Later calls throw, and pending calls reject with,
   * `DeviceLostError`. Await `ended` to know the Worker is gone.
   */
  destroy(): void {
    this.connection.destroy();
  }

  /** Same as `destroy()`, so `using client = await createClient({ worker: true })` works. */
  [Symbol.dispose](): void {
    this.destroy();
  }

  /**
   * Waits for the work queued on this stream, destroys the device even when
   * the wait rejects, and waits for the Worker to close.
   *
   * @returns Rejects with what `sync()` rejected with.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      if (!this.connection.closed) await this.sync();
    } finally {
      this.destroy();
      await this.ended;
    }
  }
}
