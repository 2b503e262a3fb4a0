/**
 * `WebGpuServer`: the `ComputeServer` on Deno's WebGPU. It keeps the launch
 * path, the stream lookup and the device's lifecycle, and routes every other
 * call to the helper serving it (transfers, memory, draining calls, graphs).
 *
 * @module
 */

import { slotOf } from "../_util/slot.ts";
import { DeviceLostError, DeviceValidationError } from "../errors.ts";
import { checkStreamId, type GraphId, type ProfilingToken, type StreamId } from "../ids.ts";
import type { ServerLogger } from "../logger.ts";
import { ManagedMemory } from "../contract/managed_memory.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import type { Stream } from "../stream/stream.ts";
import type { CapturedGraph } from "../graph/graph.ts";
import { ExclusiveLock } from "../_util/exclusive_lock.ts";
import type { ComputeServer, ServerUtilities } from "../contract/compute_server.ts";
import type { DeviceLink } from "../contract/device_link.ts";
import { Handle } from "../contract/handle.ts";
import { combineUsage } from "../memory/memory_usage.ts";
import { discardProfile } from "../stream/stream_profiles.ts";
import { acquireDevice } from "./device.ts";
import type { LaunchPath } from "./launch_path.ts";
import type { Tuner } from "../tune/tuner.ts";
import type { ServerOptions } from "../options/server_options.ts";
import { type ServerSetup, setUpServer } from "./server_setup.ts";
import { watchDevice } from "./device_watch.ts";
import { ServerCollectives } from "../collective/server_collectives.ts";
import type {
  BufferBinding,
  CopyDescriptor,
  CubeCount,
  DeviceId,
  DeviceProperties,
  InfoWords,
  KernelArguments,
  LaunchMode,
  ManagedResource,
  MemoryKind,
  ProfileDuration,
} from "../contract/types.ts";
import type { MemoryAllocationMode, MemoryConfiguration, MemoryReport, MemoryUsage } from "../contract/memory_types.ts";
import type { Kernel } from "../contract/kernel.ts";

/**
 * The `ComputeServer` of one device on Deno's WebGPU. A client drives it
 * (`client.server`); call it directly to use the contract as CubeCL's users
 * do: memory by descriptor, launches by `CubeCount` and `KernelArguments`,
 * reads and writes by `CopyDescriptor`, every call naming its stream.
 *
 * @example Allocate, write and read through the contract
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 * import { ManagedMemory } from "@denogpu/runtime/server";
 *
 * await using client = await createClient();
 * const server = client.server;
 * const memory = new ManagedMemory(1, 1);
 * server.initializeMemory(memory, 16, 0);
 * const copy = { binding: { memory, offsetStart: 0, offsetEnd: 0, stream: 0, size: 16 }, shape: [4], strides: [1], elemSize: 4 };
 * server.write([[copy, new Uint8Array(new Uint32Array([1, 2, 3, 4]).buffer)]], 0);
 * console.log(new Uint32Array((await server.read([copy], 0))[0]!.buffer)); // Uint32Array(4) [1, 2, 3, 4]
 * memory.drop(); // the user reference: the slice can be reused
 * ```
 */
export class WebGpuServer implements ComputeServer, DeviceLink {
  /** The device. */
  readonly device: GPUDevice;
  #ctx: DeviceContext;
  /** The helpers every call but the launch path is routed to (transfers, memory, draining calls, graphs). */
  #parts: ServerSetup;
  /** The slots' streams by index (the launch path reads them directly). */
  #streams: (Stream | undefined)[];
  #owned: boolean;
  #exclusive = new ExclusiveLock();
  /** The launch path, which also holds the loss and dry-run state every call reads. */
  #path: LaunchPath;
  #streamOf = (slot: number): Stream => this.stream(slot);
  /** Stops listening to the device's uncaptured errors and loss (at destroy). */
  #unwatch: () => void;
  /** The device's identity and collectives. */
  #comm: ServerCollectives;
  #ended = Promise.withResolvers<void>();

  private constructor(
    device: GPUDevice,
    owned: boolean,
    props: DeviceProperties,
    options: ServerOptions,
    index: number | undefined,
  ) {
    this.device = device;
    this.#owned = owned;
    const parts = this.#parts = setUpServer({ server: this, device, properties: props, options });
    this.#ctx = parts.ctx;
    this.#streams = parts.slots.streams;
    this.#path = parts.path;
    this.#unwatch = watchDevice(device, {
      // Queued on the stream that acted last (WebGPU does not say whose error it was).
      onError: (error) => {
        if (this.#path.closed !== null) return;
        const target = this.#ctx.current ?? this.stream(0);
        target.errors.push(new DeviceValidationError(`uncaptured device error: ${error.message}`, { cause: error }));
      },
      onLoss: (error) => this.#lose(error),
    });
    this.#comm = new ServerCollectives(this, { index, owned }); // last: it registers the device
  }

  /**
   * Requests a device and builds a server on it.
   *
   * @param options Device, batching, stream, memory and logger options.
   * @param index The logical device index (taken by the device registry);
   * the lowest free one when omitted. A device passed in is numbered among `existing` devices.
   * @returns The server.
   * @throws {RangeError} For refused options (see `setUpServer`); a device
   * requested for it is destroyed first.
   */
  static async create(options: ServerOptions = {}, index?: number): Promise<WebGpuServer> {
    const acquired = await acquireDevice(options);
    let server: WebGpuServer;
    try {
      server = new WebGpuServer(acquired.device, acquired.owned, acquired.properties, options, index);
    } catch (e) {
      // Refused options: a device the runtime requested would otherwise stay alive, unreachable.
      if (acquired.owned) acquired.device.destroy();
      throw e;
    }
    await server.#ctx.fastReads.start(acquired.device, options.fastReads); // guarded: off, with a warning, when unverified
    if (server.#ctx.fastReads.active) { for (const id of server.streamIds()) server.stream(id).stockStaging(); }
    return server;
  }

  /** True while reads, syncs and profile read-backs map early (the `fastReads` option, verified at start). */
  get fastReads(): boolean {
    return this.#ctx.fastReads.active;
  }

  /** Why fast reads are off, or what verified them when on. */
  get fastReadsReason(): string {
    return this.#ctx.fastReads.reason;
  }

  /** Identity of the device: its kind's type id and its logical index (see `client.deviceId`). */
  get deviceId(): DeviceId {
    return this.#comm.deviceId;
  }

  /** Device properties. */
  get properties(): DeviceProperties {
    return this.#parts.utilities.properties;
  }

  /** @ignore Settings in force (`tasksMax`, `openPassAhead`, `maxStreams`, alignments). */
  get settings(): DeviceContext["settings"] {
    return this.#ctx.settings;
  }

  /** Pipelines compiled so far. */
  get pipelinesCompiled(): number {
    return this.#ctx.pipelines.compiled;
  }

  /** Bind groups created so far. */
  get bindGroupsCreated(): number {
    return this.#ctx.bindGroups.created;
  }

  /** @ignore Compute passes begun so far by every stream (tests count pass breaks with it). */
  get passesBegun(): number {
    return this.#ctx.passesBegun;
  }

  /** True once the device is lost or the server destroyed. */
  get closed(): boolean {
    return this.#path.closed !== null;
  }

  /** True while a dry run is open: launches only compile, and new pages get no memory until used. */
  get dryRun(): boolean {
    return this.#path.dryRun > 0;
  }

  /** Opens (`+1`) or closes (`-1`) a dry-run window; windows nest. */
  dryRunDepth(delta: 1 | -1): void {
    this.#path.dryRun = Math.max(0, this.#path.dryRun + delta);
  }

  /** The device's autotuner: decisions per device, kept in the `tuneCache` store (see `ComputeClient.autotune`). */
  get tuner(): Tuner {
    return this.#parts.tuner;
  }

  /** @ignore The launch path `launchRaw` runs (the client calls it directly). */
  get launchPath(): LaunchPath {
    return this.#path;
  }

  /** @ignore Host staging memory lent by `staging()`. */
  get hostStaging(): ServerSetup["hostStaging"] {
    return this.#parts.hostStaging;
  }

  /** Throws the `DeviceLostError` when the device is gone. */
  checkAlive(): void {
    if (this.#path.closed !== null) throw this.#path.closed;
  }

  /** @ignore The stream slot of a stream id, created on first use. */
  stream(id: StreamId): Stream {
    const slot = slotOf(id, this.#ctx.settings.maxStreams);
    const s = this.#streams[slot];
    if (s !== undefined) return s;
    checkStreamId(id, "stream");
    return this.#parts.slots.create(slot);
  }

  utilities(): ServerUtilities {
    return this.#parts.utilities;
  }

  logger(): ServerLogger {
    return this.#parts.utilities.logger;
  }

  stage(): "downstream" {
    return "downstream";
  }

  initializeMemory(memory: ManagedMemory, size: number, stream: StreamId, kind: MemoryKind = "storage"): void {
    this.#parts.memory.initialize(memory, size, stream, this.#path.dryRun > 0, kind);
  }

  /**
   * See `ComputeServer.read`.
   *
   * @param descriptors What to read.
   * @param stream The calling stream.
   * @param checked True when the caller built the descriptors from handles it checked (the door is skipped).
   * @returns The bytes of each descriptor.
   */
  read(descriptors: readonly CopyDescriptor[], stream: StreamId, checked = false): Promise<Uint8Array<ArrayBuffer>[]> {
    return this.#parts.transfers.read(descriptors, stream, null, checked);
  }

  /**
   * `read` into `into` (each as long as its descriptor), a few MiB at a time, with no buffer of the whole size
   * (how a worker reads a collective's source into shared memory). Rejects as `read` does, or with `RangeError`.
   */
  readInto(
    descriptors: readonly CopyDescriptor[],
    stream: StreamId,
    into: readonly Uint8Array[],
    checked = false,
  ): Promise<void> {
    return this.#parts.transfers.read(descriptors, stream, into, checked).then(() => {});
  }

  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId): void {
    this.#parts.transfers.write(writes, stream);
  }

  sync(stream: StreamId): Promise<void> {
    return this.#parts.drains.sync(stream);
  }

  /**
   * Runs `fn` with the server held: other sections and profiles wait; nested calls run at once.
   *
   * @returns What `fn` returns; rejects with `DeviceLostError`, without running `fn`, once the device is gone.
   */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    // Checked when the section gets the lock: one queued behind a section that destroyed the server must not run.
    return this.#exclusive.run(() => {
      this.checkAlive();
      return fn();
    });
  }

  getResource(binding: BufferBinding, stream: StreamId): ManagedResource {
    return this.#parts.transfers.getResource(binding, stream);
  }

  launch(kernel: Kernel, count: CubeCount, args: KernelArguments, mode: LaunchMode, stream: StreamId): void {
    this.#path.spread(kernel, count, args, mode, stream);
  }

  /**
   * The allocation-free form of `launch` the client uses: the count and the
   * arguments spread out. Every launch passes here, and is checked here
   * (`checkLaunch`), whichever entry it came through.
   *
   * @throws {TypeError} {RangeError} {ResourceLimitError} For a bad argument; {DeviceLostError} once the device is gone.
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
  ): void {
    this.#path.launch(kernel, buffers, info, x, y, z, indirect, mode, stream, false);
  }

  flush(stream: StreamId): Promise<void> {
    return this.#parts.drains.flush(stream);
  }

  memoryUsage(stream: StreamId): MemoryUsage {
    return this.#parts.memory.usage(stream);
  }

  memoryReport(stream: StreamId): MemoryReport {
    return this.#parts.memory.report(stream);
  }

  memoryCleanup(stream: StreamId): void {
    this.#parts.memory.cleanup(stream);
  }

  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void {
    this.#parts.memory.setMode(mode, stream);
  }

  staging(sizes: readonly number[], _stream: StreamId): Uint8Array[] {
    return this.#parts.transfers.staging(sizes);
  }

  startProfile(stream: StreamId): Promise<ProfilingToken> {
    return this.#parts.drains.startProfile(stream);
  }

  endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration> {
    return this.#parts.drains.endProfile(stream, token);
  }

  graphPrepare(stream: StreamId): void {
    this.checkAlive();
    this.#parts.graphs.prepare(this.stream(stream), this.#path.dryRun > 0);
  }

  /** Disarms a prepared or recording capture without building a graph (the captured function threw). */
  graphAbort(stream: StreamId): void {
    this.#parts.graphs.abort(this.stream(stream));
  }

  beginCapture(stream: StreamId): Promise<void> {
    return this.#parts.drains.beginCapture(stream, this.#path.dryRun > 0);
  }

  /**
   * See `ComputeServer.endCapture`.
   *
   * @param stream The recording stream.
   * @param sameAsWarmup True (what `capture(fn)` passes) to fail with
   * `GraphStateError` when the recorded launches differ from the warm-up's.
   * @returns The graph's id.
   */
  endCapture(stream: StreamId, sameAsWarmup = false): Promise<GraphId> {
    return this.#parts.drains.endCapture(stream, sameAsWarmup);
  }

  replay(graph: GraphId, stream: StreamId): void {
    this.checkAlive();
    this.#parts.graphs.replay(graph, this.stream(stream), this.#streamOf);
  }

  /** @ignore The captured graph of an id and its stream, for the replay fast path (undefined when gone). */
  capturedGraph(graph: GraphId): { graph: CapturedGraph; stream: Stream } | undefined {
    const g = this.#parts.graphs.get(graph);
    return g === undefined ? undefined : { graph: g, stream: this.stream(g.slot) };
  }

  graphDestroy(graph: GraphId, _stream: StreamId): void {
    if (this.#path.closed !== null) return;
    this.#parts.graphs.destroy(graph, this.#streamOf);
  }

  /** Graphs alive on this server. */
  get graphCount(): number {
    return this.#parts.graphs.size;
  }

  streamIds(): StreamId[] {
    return this.#parts.slots.ids();
  }

  installMemoryPools(config: MemoryConfiguration, stream: StreamId): void {
    this.#parts.memory.installPools(config, stream);
  }

  // ServerCommunication: the device's identity and collectives live in `ServerCollectives`.
  commInit: ComputeServer["commInit"] = (devices) => this.#comm.commInit(devices);
  allReduce: ComputeServer["allReduce"] = (...args) => this.#comm.allReduce(...args);
  send: ComputeServer["send"] = (...args) => this.#comm.send(...args);
  recv: ComputeServer["recv"] = (...args) => this.#comm.recv(...args);
  syncCollective: ComputeServer["syncCollective"] = (stream) => this.#comm.syncCollective(stream);

  // DeviceLink: what a client needs besides the contract's calls.

  /** What handles belong to: this server. */
  get owner(): object {
    return this;
  }

  /** Stream slots. */
  get maxStreams(): number {
    return this.#ctx.settings.maxStreams;
  }

  /** Resolves once the device is lost or destroyed. */
  get ended(): Promise<void> {
    return this.#ended.promise;
  }

  /** See `DeviceLink.allocate`. */
  allocate(size: number, stream: StreamId, kind: MemoryKind): Handle {
    const memory = new ManagedMemory(1, 1);
    this.initializeMemory(memory, size, stream, kind);
    return new Handle(this, memory, stream, size);
  }

  /** See `DeviceLink.writeBytes`: copied at once (`writeBuffer`), so a lent staging view goes back right after. */
  writeBytes(handle: Handle, bytes: Uint8Array, stream: StreamId, recycle: boolean): void {
    // The client checked the handle and the length: the door is skipped.
    this.#parts.transfers.write(
      [[{ binding: handle, shape: [bytes.byteLength], strides: [1], elemSize: 1 }, bytes]],
      stream,
      true,
    );
    if (recycle && this.#parts.hostStaging.owns(bytes)) this.#parts.hostStaging.recycle(bytes);
  }

  /** Memory usage summed over every stream. */
  deviceUsage(): MemoryUsage {
    return combineUsage(...this.streamIds().map((id) => this.memoryUsage(id)));
  }

  /** Frees every fully free page (and idle staging buffers) of every stream. */
  cleanup(): void {
    for (const id of this.streamIds()) this.memoryCleanup(id);
  }

  /** See `DeviceLink.discardProfile`. */
  discardProfile(_stream: StreamId, token: ProfilingToken): void {
    discardProfile(this.stream(token.stream), token);
  }

  /** See `DeviceLink.profileSummary`. */
  profileSummary(): void {
    const logger = this.#ctx.logger;
    if (logger.profiling === "disabled") return;
    const summary = logger.profileSummary();
    if (summary) logger.log("profile", summary);
  }

  /** See `DeviceLink.captureState`. */
  captureState(stream: StreamId): "none" | "prepared" | "recording" {
    return this.stream(stream).capture.state;
  }

  #lose(error: DeviceLostError): void {
    this.#ended.resolve();
    this.#path.closed ??= error;
    this.#ctx.markLost(error);
    this.#comm?.close(error); // undefined only if the device is lost before the constructor ends
  }

  /**
   * Submits every stream, then destroys the device when the server created
   * it; a device the caller passed in stays usable, and the server stops
   * listening to its errors. Pending promises reject, and later calls throw,
   * `DeviceLostError` (`destroyed`). Destroying twice is a no-op.
   */
  destroy(): void {
    if (this.#path.closed !== null) return;
    this.#parts.slots.submitAll();
    this.#lose(
      new DeviceLostError("the client was destroyed; create a new client to continue", { reason: "destroyed" }),
    );
    this.#unwatch();
    this.#ctx.pipelines.release();
    this.#parts.graphs.clear();
    this.#parts.slots.destroyAll();
    if (this.#owned) this.device.destroy();
  }
}
