/**
 * `ComputeClient`: the door users hold. It turns user forms (host data,
 * handles, counts) into the contract's, owns the handles' reference counts,
 * and routes every call to its stream on the server, where the arguments are
 * checked by the contract's checks (`src/contract/`), whichever entry a call
 * comes through. Its memory half is `MemoryClient`; the sections' bodies
 * (profiles, captures) live in `_sections.ts`.
 *
 * @module
 */

import type { ProfilingToken, StreamId } from "../ids.ts";
import { Handle } from "../contract/handle.ts";
import type { Kernel } from "../contract/kernel.ts";
import { badCountForm } from "../contract/launch_checks.ts";
import type { BufferBinding, CubeCount, InfoWords, LaunchMode, ProfileDuration } from "../contract/types.ts";
import { ServerError } from "../errors.ts";
import { captureSection, profileSection } from "./_sections.ts";
import { CollectiveClient } from "./collective_client.ts";
import type { ProfileOptions, ProfileResult } from "./client_types.ts";
import { Graph } from "./graph_handle.ts";
import type { LaunchPath } from "../server/launch_path.ts";
import type { JsonValue, TunableSet } from "../tune/tunable_set.ts";
import type { TuneOptions } from "../tune/tuner.ts";
import type { TuneMeasurer } from "../tune/measurer.ts";
import { profileMeasurer } from "../tune/profile_measurer.ts";
import type { WebGpuServer } from "../server/webgpu_server.ts";

/**
 * The client of one device, bound to one stream: launches,
 * synchronisation, profiles and graphs, and (from `MemoryClient` and
 * `CollectiveClient`) memory, transfers and collectives. Make one with
 * `createClient()`; `onStream(id)` gives a client of the same device on
 * another stream.
 *
 * @example Write, launch, read
 * ```ts
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * await using client = await createClient();
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
export class ComputeClient extends CollectiveClient implements Disposable, AsyncDisposable {
  /** The server's launch path, called directly: every argument is checked at its door. */
  #launch: LaunchPath;
  /** Measures autotune rounds on this client's stream (made on first use). */
  #measurer: TuneMeasurer | null = null;

  /**
   * Internal: use `createClient()`.
   *
   * @param server The server.
   * @param stream The stream of this client.
   * @throws {RangeError} When the stream id is not a non-negative safe integer.
   */
  constructor(server: WebGpuServer, stream: StreamId = 0) {
    super(server, stream);
    this.#launch = server.launchPath;
  }

  /**
   * A client of the same device on another stream. Handles may be shared
   * between streams; the runtime keeps their ordering.
   *
   * @param stream The stream id.
   * @returns The client.
   * @throws {RangeError} When the id is not a non-negative safe integer.
   */
  onStream(stream: StreamId): ComputeClient {
    return new ComputeClient(this.server, stream);
  }

  /**
   * Queues a kernel launch. Device-side failures are queued and raised by the
   * next `flush`, `sync` or `read`; argument errors throw here.
   *
   * @param kernel The kernel.
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
    // The count is taken apart here and in WorkerClient.launch alike: a shared helper filling a scratch object
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
    // Every argument is checked once, at the server's door (contract/launch_checks.ts).
    const mode = options === undefined ? "execute" : options.mode ?? "execute";
    this.#launch.launch(kernel, buffers, info ?? null, x, y, z, indirect, mode, this.stream, false);
  }

  /**
   * Submits queued work and raises queued errors, without waiting for the device.
   *
   * @returns Rejects with `ServerUnhealthyError` when errors were queued.
   */
  flush(): Promise<void> {
    return this.server.flush(this.stream);
  }

  /**
   * Waits until the device has run everything submitted, then raises queued errors.
   *
   * @returns Rejects with `ServerUnhealthyError` when errors were queued.
   */
  async sync(): Promise<void> {
    await this.server.sync(this.stream);
    const logger = this.server.logger();
    if (logger.profiling !== "disabled") {
      const summary = logger.profileSummary();
      if (summary) logger.log("profile", summary);
    }
  }

  /**
   * Runs `fn` with the device held: other sections and profiles wait; nested
   * calls run at once. An exception in `fn` becomes a `ServerError` naming it.
   *
   * @param fn The section.
   * @returns What `fn` returns; rejects with `DeviceLostError`, without running `fn`, once the device is gone.
   */
  async exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await this.server.exclusive(fn);
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
    return this.server.startProfile(this.stream);
  }

  /**
   * Closes a profile opened by `startProfile`.
   *
   * @param token The token.
   * @returns The duration; rejects with `ProfileError` for an unknown or ended token.
   */
  endProfile(token: ProfilingToken): Promise<ProfileDuration> {
    return this.server.endProfile(this.stream, token);
  }

  /**
   * Runs `fn` and measures the device work it queues on this stream: with
   * `timestamp-query` each dispatch's device time and a per-kernel summary.
   * Runs as an exclusive section; profiles nest.
   *
   * @param fn The work to measure.
   * @param options `trace` writes a Chrome trace (Perfetto) of the dispatches.
   * @returns The result and the measurements.
   * @throws {ProfileError} When errors were drained while the profile was open.
   * @throws {TraceWriteError} When the trace could not be written, after `fn` ran.
   */
  profile<T>(fn: () => T | Promise<T>, options: ProfileOptions = {}): Promise<ProfileResult<T>> {
    return profileSection(this.server, this.stream, fn, options);
  }

  /**
   * Arms graph capture: what runs next is the warm-up (executed; it may read),
   * and its allocations go to the persistent pool.
   *
   * @throws {GraphStateError} When already armed or recording, or inside a dry run.
   */
  graphPrepare(): void {
    this.server.graphPrepare(this.stream);
  }

  /**
   * Starts recording after a warm-up: launches from now on are recorded, not executed.
   *
   * @returns Resolves once recording has started; rejects with the warm-up's queued errors.
   */
  beginCapture(): Promise<void> {
    return this.server.beginCapture(this.stream);
  }

  /**
   * Stops recording.
   *
   * @returns The graph recorded since `beginCapture`.
   */
  async endCapture(): Promise<Graph> {
    return new Graph(this.server, this.stream, await this.server.endCapture(this.stream));
  }

  /**
   * Captures `fn` as a graph: runs it once as a warm-up, then again while
   * recording. The graph keeps every buffer it recorded until destroyed.
   *
   * @param fn The work to capture (the same launches both times).
   * @returns The graph; `replay()` it, and `destroy()` it when done.
   */
  async capture(fn: () => unknown): Promise<Graph> {
    return new Graph(this.server, this.stream, await captureSection(this.server, this.stream, fn));
  }

  /**
   * Runs the fastest working candidate of `set` for `input` and returns what
   * its `run` returned. The first call for a key measures the candidates on
   * this stream (every candidate's samples of a round share one device wait),
   * unless the device's `tuneCache` already holds a decision made with the
   * same candidates and sources; later calls run the winner only. Concurrent
   * calls for a key share one tuning.
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
    return this.server.tuner.tune(set, input, { ...options, measurer: this.#measurer });
  }

  /**
   * Submits queued work and destroys the device the client created (a device
   * passed in with `createClient({ device })` stays usable). Later calls
   * throw `DeviceLostError`.
   */
  destroy(): void {
    this.server.destroy();
  }

  /** Same as `destroy()`, so `using client = await createClient()` works (queued work is not waited for). */
  [Symbol.dispose](): void {
    this.destroy();
  }

  /**
   * Waits for the work queued on this stream, then destroys the device even
   * when the wait rejects, so `await using` ends its scope with the work done.
   *
   * @returns Rejects with what `sync()` rejected with.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.server.closed) return;
    try {
      await this.sync();
    } finally {
      this.destroy();
    }
  }
}
