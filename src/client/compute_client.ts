/**
 * `ComputeClient`: the door users hold. It turns user forms (host data,
 * handles, counts) into the contract's, owns the handles' reference counts,
 * and routes every call to its stream on the server, where the arguments are
 * checked by the contract's checks (`src/contract/`), whichever entry a call
 * comes through.
 *
 * @module
 */

import { checkStreamId, type StreamId } from "../ids.ts";
import { ManagedMemory } from "../contract/managed_memory.ts";
import { combineUsage } from "../memory/memory_usage.ts";
import { Handle } from "../contract/handle.ts";
import type {
  BufferBinding,
  CubeCount,
  DeviceProperties,
  InfoWords,
  ManagedResource,
  ProfileDuration,
} from "../contract/types.ts";
import type { WebGpuServer } from "../server/webgpu_server.ts";
import { ServerError } from "../errors.ts";
import type { ProfilingToken } from "../ids.ts";
import { captureSection, profileSection } from "./_sections.ts";
import { allocTensors, checkTensorEntries, planTensors } from "./_tensors.ts";
import { Graph } from "./graph_handle.ts";
import { badCountForm } from "../contract/launch_checks.ts";
import { checkHandle, checkSize } from "../contract/handle_checks.ts";
import { checkDescriptor } from "../contract/descriptors.ts";
import { type HostData, type ProfileOptions, type ProfileResult, type Tensor, toBytes } from "./client_types.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutDescriptor,
  MemoryReport,
  MemoryUsage,
} from "../contract/memory_types.ts";
import type { Kernel } from "../contract/kernel.ts";
import type { LaunchMode } from "../contract/types.ts";

/**
 * The user-facing client of one device, bound to one stream.
 *
 * @example Write, launch, read
 * ```ts ignore
 * import { createClient, defineKernel } from "@denogpu/runtime";
 * const client = await createClient();
 * const x = client.create(new Float32Array([1, 2, 3, 4]));
 * const double = defineKernel({
 *   name: "double",
 *   wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *          @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] *= 2.0; }`,
 * });
 * client.launch(double, [1], [x]);
 * console.log(new Float32Array((await client.read(x)).buffer)); // [2, 4, 6, 8]
 * client.destroy();
 * ```
 */
export class ComputeClient implements Disposable, AsyncDisposable {
  /** The server behind the client (shared by every client of `onStream`). */
  readonly server: WebGpuServer;
  /** The stream every call of this client targets. */
  readonly stream: StreamId;

  /**
   * Internal: use `createClient()`.
   *
   * @param server The server.
   * @param stream The stream of this client.
   */
  constructor(server: WebGpuServer, stream: StreamId = 0) {
    checkStreamId(stream, "ComputeClient");
    this.server = server;
    this.stream = stream;
  }

  /** Device properties (no round trip). */
  get properties(): DeviceProperties {
    return this.server.properties;
  }

  /**
   * A client of the same device bound to another stream. Handles may be
   * shared between them; ordering across streams is kept by the runtime.
   *
   * @param stream The stream id.
   * @returns The client.
   * @throws {RangeError} When the id is not a non-negative safe integer.
   */
  onStream(stream: StreamId): ComputeClient {
    return new ComputeClient(this.server, stream);
  }

  #checkHandle(h: unknown, where: string): Handle {
    return checkHandle(this.server, h, where);
  }

  /**
   * Allocates `size` bytes on this client's stream. Contents are unspecified
   * (a reused slice keeps stale bytes).
   *
   * @param size Bytes; 0 is allowed.
   * @returns A handle owning one reference.
   * @throws {RangeError} When the size is not a non-negative integer.
   * @throws {ResourceLimitError} When the size exceeds `maxBufferSize`.
   * @throws {IoError} When no pool can serve it (`buffer-too-big`, `pool-capacity-exceeded`).
   */
  empty(size: number): Handle {
    this.server.checkAlive();
    checkSize(this.server, size, "empty");
    const memory = new ManagedMemory(1, 1);
    this.server.initializeMemory(memory, size, this.stream);
    return new Handle(this.server, memory, this.stream, size);
  }

  /**
   * Allocates a group of tensors in one reservation, laid out by the server's
   * layout policy (contiguous, each at an aligned offset).
   *
   * @param descriptors Shape and element size of each tensor.
   * @returns One tensor per descriptor; release each handle when done.
   */
  emptyTensors(descriptors: readonly MemoryLayoutDescriptor[]): Tensor[] {
    this.server.checkAlive();
    if (!Array.isArray(descriptors)) throw new TypeError("emptyTensors: descriptors must be an array");
    return allocTensors((size) => this.empty(size), descriptors, planTensors(this.server, descriptors, "emptyTensors"));
  }

  /**
   * Allocates a group of tensors in one reservation and writes each one's data.
   * Every argument is checked before anything is allocated.
   *
   * @param entries Each tensor's descriptor and bytes (exactly `product(shape) × elemSize`).
   * @returns One tensor per entry.
   * @throws {RangeError} When a data length does not match its shape.
   */
  createTensors(entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[]): Tensor[] {
    this.server.checkAlive();
    const { bytes, descriptors, plan } = checkTensorEntries(this.server, entries);
    const tensors = allocTensors((size) => this.empty(size), descriptors, plan);
    // Every write first, then the staging views go back: entries may share one
    // view's buffer, and taking it back detaches every view over it.
    bytes.forEach((b, i) => this.#writeBytes(tensors[i]!.handle, b, false));
    for (const b of bytes) this.#recycle(b);
    return tensors;
  }

  /**
   * Reads a tensor (contiguous strides only).
   *
   * @param tensor The tensor.
   * @returns Exactly `product(shape) × elemSize` bytes; rejects with `IoError`
   * `unsupported-strides` for other strides.
   */
  async readTensor(tensor: Tensor): Promise<Uint8Array> {
    const h = this.#checkHandle(tensor?.handle, "readTensor");
    const descriptor = h.copyDescriptor(tensor.shape, tensor.strides, tensor.elemSize);
    checkDescriptor(descriptor, "readTensor");
    return (await this.server.read([descriptor], this.stream))[0]!;
  }

  /**
   * Lends reusable host staging memory. Fill a view and pass it to `write` or
   * `create`: its buffer then returns to the pool and the view is detached,
   * so repeated uploads allocate and page-fault nothing. A lent view's bytes
   * are unspecified (it may hold an earlier upload): fill all of it.
   *
   * @param sizes Bytes of each view.
   * @returns One `Uint8Array` per size.
   * @throws {TypeError} When `sizes` is not an array.
   * @throws {RangeError} When a size is not a non-negative integer.
   * @throws {ResourceLimitError} When a size exceeds `maxBufferSize` (it could never be written).
   */
  staging(sizes: readonly number[]): Uint8Array[] {
    return this.server.staging(sizes, this.stream);
  }

  /**
   * Runs `fn` as a dry run: launches compile and cache their pipelines but
   * dispatch nothing, and new pages get no device memory until first used.
   * Windows nest; work from other callers during the window is dry too.
   *
   * @param fn The work to rehearse.
   * @returns What `fn` returns; rejects with `DeviceLostError` once the device is gone.
   */
  async dryRun<T>(fn: () => T | Promise<T>): Promise<T> {
    this.server.checkAlive();
    this.server.dryRunDepth(1);
    try {
      return await fn();
    } finally {
      this.server.dryRunDepth(-1);
    }
  }

  #writeBytes(h: Handle, bytes: Uint8Array, recycle = true): void {
    this.server.write([[{ binding: h, shape: [bytes.byteLength], strides: [1], elemSize: 1 }, bytes]], this.stream);
    if (recycle) this.#recycle(bytes);
  }

  /** Takes a lent staging view's buffer back (detaching it); other bytes are left alone. */
  #recycle(bytes: Uint8Array): void {
    const staging = this.server.hostStaging;
    if (staging.owns(bytes)) staging.recycle(bytes);
  }

  /**
   * Allocates memory holding a copy of `data`, visible to all later work.
   *
   * @param data The bytes.
   * @returns A handle owning one reference.
   * @throws {TypeError} When `data` is not an ArrayBuffer or a view.
   */
  create(data: HostData): Handle {
    const bytes = toBytes(data, "create");
    const h = this.empty(bytes.byteLength);
    this.#writeBytes(h, bytes);
    return h;
  }

  /**
   * Overwrites the memory of `handle` with `data` (exactly `sizeInUse` bytes),
   * ordered after every launch already queued.
   *
   * @param handle The destination.
   * @param data The bytes.
   * @throws {RangeError} When the byte length differs from `handle.sizeInUse`.
   */
  write(handle: Handle, data: HostData): void {
    this.server.checkAlive();
    const h = this.#checkHandle(handle, "write");
    const bytes = toBytes(data, "write");
    if (bytes.byteLength !== h.sizeInUse) {
      throw new RangeError(`write: ${bytes.byteLength} B given for memory ${h.memory.id} of ${h.sizeInUse} B`);
    }
    this.#writeBytes(h, bytes);
  }

  /**
   * Reads `handle`'s bytes. Reads requested in the same tick share one device
   * wait. Rejects with `ServerUnhealthyError` when the stream had queued errors.
   *
   * @param handle The memory.
   * @returns Exactly `sizeInUse` bytes.
   */
  async read(handle: Handle): Promise<Uint8Array> {
    return (await this.readMany([handle]))[0]!;
  }

  /**
   * Reads several handles with one copy batch and one device wait.
   *
   * @param handles The memory.
   * @returns Their bytes, in order.
   */
  readMany(handles: readonly Handle[]): Promise<Uint8Array[]> {
    try {
      if (!Array.isArray(handles)) throw new TypeError("readMany: handles must be an array of Handle");
      const descriptors = handles.map((h, i) => {
        const handle = this.#checkHandle(h, `readMany[${i}]`);
        return { binding: handle, shape: [handle.sizeInUse], strides: [1], elemSize: 1 };
      });
      return this.server.read(descriptors, this.stream);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Enqueues a kernel launch on this client's stream. Device-side failures are
   * queued and raised by the next `flush`, `sync` or `read`.
   *
   * @param kernel The kernel.
   * @param count Workgroups: `[x, y?, z?]`, a `CubeCount`, or a handle holding three u32.
   * @param buffers Handles, one per buffer the kernel binds, in `(group, binding)` order (see `Kernel`).
   * @param info Scalars for the kernel's last binding, as a 32-bit typed array.
   * @param options `{ mode: "skip" }` compiles without dispatching.
   * @throws {TypeError} For a wrong kernel, handle, or info type, or a
   * binding count that does not match the kernel's declarations.
   * @throws {ResourceLimitError} When a count exceeds `maxComputeWorkgroupsPerDimension`.
   */
  launch(
    kernel: Kernel,
    count: readonly number[] | Handle | CubeCount,
    buffers: readonly Handle[],
    info?: InfoWords,
    options?: { mode?: LaunchMode },
  ): void {
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
    this.server.launchRaw(
      kernel,
      buffers,
      info ?? null,
      x,
      y,
      z,
      indirect,
      options === undefined ? "execute" : options.mode ?? "execute",
      this.stream,
    );
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
   * Memory usage.
   *
   * @returns Usage summed over every initialised stream.
   */
  memoryUsage(): MemoryUsage {
    return combineUsage(...this.server.streamIds().map((id) => this.server.memoryUsage(id)));
  }

  /**
   * Per-pool memory report.
   *
   * @returns The per-pool report of this client's stream.
   */
  memoryReport(): MemoryReport {
    return this.server.memoryReport(this.stream);
  }

  /** Frees what can be freed on every initialised stream. */
  memoryCleanup(): void {
    for (const id of this.server.streamIds()) this.server.memoryCleanup(id);
  }

  /**
   * Switches where this stream's new allocations go; persistent windows nest.
   *
   * @param mode `persistent` opens a window, `auto` closes one.
   */
  allocationMode(mode: MemoryAllocationMode): void {
    this.server.allocationMode(mode, this.stream);
  }

  /**
   * Installs a new pool layout on this stream (only when nothing is live in
   * its pools) and records it for streams created later.
   *
   * @param config The layout.
   * @throws {InstallMemoryPoolsError} `pools-in-use`.
   * @throws {PoolConfigError} For an invalid layout.
   */
  installMemoryPools(config: MemoryConfiguration): void {
    this.server.installMemoryPools(config, this.stream);
  }

  /**
   * The raw `GPUBuffer` range behind a handle, for interop with other WebGPU
   * code on the same device. Queued work on it is submitted first.
   *
   * @param handle The memory.
   * @returns The range; `release()` it when done.
   */
  getResource(handle: Handle): ManagedResource {
    return this.server.getResource(this.#checkHandle(handle, "getResource"), this.stream);
  }

  /**
   * Runs `fn` with the device held: other `exclusive` sections and profiles
   * wait; calls from inside `fn` (nested ones too) run at once. An exception
   * in `fn` becomes a `ServerError` whose message contains it.
   *
   * @param fn The section.
   * @returns What `fn` returns; rejects with `DeviceLostError`, without running `fn`, once the device is gone.
   */
  async exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await this.server.exclusive(fn);
    } catch (e) {
      if (e instanceof ServerError) throw e;
      throw new ServerError(`exclusive: the section threw: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    }
  }

  /**
   * Opens a profile on this stream; see `profile()` for the usual way.
   *
   * @returns A token for `endProfile`.
   */
  startProfile(): Promise<ProfilingToken> {
    return this.server.startProfile(this.stream);
  }

  /**
   * Closes a profile.
   *
   * @param token The token from `startProfile`.
   * @returns The duration; rejects with `ProfileError` for an unknown or ended token, or one opened on another stream.
   */
  endProfile(token: ProfilingToken): Promise<ProfileDuration> {
    return this.server.endProfile(this.stream, token);
  }

  /**
   * Runs `fn` and measures the device work it queues on this stream. With
   * `timestamp-query`, every dispatch gets its own timestamped pass while the
   * profile is open, so the result has per-dispatch and per-kernel device
   * times; profiles nest and span any number of submits. Runs as an exclusive
   * section. An exception in `fn` is re-raised as is.
   *
   * The trace is written last: when it cannot be, the call rejects with a
   * `TraceWriteError` whose `profile` is the whole result.
   *
   * @param fn The work to measure.
   * @param options `trace` writes a Chrome trace (Perfetto) of the dispatches.
   * @returns The result and the measurements.
   * @throws {ProfileError} When errors were drained while the profile was open.
   * @throws {TraceWriteError} When the trace could not be written, after `fn` ran.
   * @throws {TypeError} When `trace` is neither a path nor a URL (before `fn` runs).
   */
  profile<T>(fn: () => T | Promise<T>, options: ProfileOptions = {}): Promise<ProfileResult<T>> {
    return profileSection(this.server, this.stream, fn, options);
  }

  /**
   * Arms graph capture on this stream: what runs next is the warm-up (it
   * executes, and may read), and its allocations go to the persistent pool.
   * Throws `GraphStateError` inside a dry run (nothing could be recorded).
   */
  graphPrepare(): void {
    this.server.graphPrepare(this.stream);
  }

  /** Starts recording: launches from now on are recorded, not executed; refused inside a dry run. */
  beginCapture(): Promise<void> {
    return this.server.beginCapture(this.stream);
  }

  /**
   * Stops recording.
   *
   * @returns The graph.
   */
  async endCapture(): Promise<Graph> {
    return new Graph(this.server, this.stream, await this.server.endCapture(this.stream));
  }

  /**
   * Captures `fn` as a graph: runs it once as a warm-up (executed), then
   * again while recording (not executed), and returns the graph. `fn` must
   * launch the same work both times; reads, syncs and profiles are refused
   * while recording, and a write makes the capture fail. Inside a dry run it
   * is refused (`GraphStateError`); a dry run opened while recording fails it.
   *
   * @param fn The work to capture.
   * @returns The graph; `replay()` it and `destroy()` it when done.
   */
  async capture(fn: () => unknown): Promise<Graph> {
    return new Graph(this.server, this.stream, await captureSection(this.server, this.stream, fn));
  }

  /**
   * Submits queued work and destroys the device the client created (a device
   * passed in with `createClient({ device })` stays usable). Later calls throw
   * `DeviceLostError`.
   */
  destroy(): void {
    this.server.destroy();
  }

  /**
   * Same as `destroy()`, so `using client = await createClient()` works. Work
   * still queued is submitted, not waited for; use `await using` to wait.
   */
  [Symbol.dispose](): void {
    this.destroy();
  }

  /**
   * Waits for the device to finish the work queued on this client's stream,
   * then destroys the device, so `await using client = await createClient()`
   * ends its scope with the work done. The device is destroyed even when the
   * wait rejects (errors queued by that work, `ServerUnhealthyError`); a
   * client already destroyed is left alone.
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
