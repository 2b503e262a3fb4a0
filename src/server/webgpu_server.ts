/**
 * `WebGpuServer`: the `ComputeServer` on Deno's WebGPU. It wires the device
 * context (queue, pipeline and bind group caches), the stream slots and their
 * memory, and routes each call to the right stream.
 *
 * @module
 */

import { slotOf } from "../_util/slot.ts";
import {
  DeviceLostError,
  DeviceValidationError,
  GraphStateError,
  IoError,
  ResourceLimitError,
  type ServerError,
  UnsupportedError,
} from "../errors.ts";
import { checkStreamId, type GraphId, type ProfilingToken, type StreamId } from "../ids.ts";
import { BindGroupCache } from "../kernel/bind_group_cache.ts";
import { Kernel } from "../kernel/kernel.ts";
import { PipelineCache } from "../kernel/pipeline_cache.ts";
import { ServerLogger } from "../logger.ts";
import type { ManagedMemory, Slice } from "../memory/managed_memory.ts";
import {
  type MemoryConfiguration,
  type PersistentMemoryPolicy,
  type PoolConfig,
  resolveMemoryConfiguration,
} from "../memory/memory_config.ts";
import type { MemoryAllocationMode } from "../memory/memory_manager.ts";
import type { MemoryReport, MemoryUsage } from "../memory/memory_usage.ts";
import { HostStagingPool } from "../memory/host_staging.ts";
import { ContiguousLayoutPolicy } from "../memory/layout_policy.ts";
import { DeviceContext } from "../stream/device_context.ts";
import type { InfoWords } from "../stream/info_arena.ts";
import type { Stream } from "../stream/stream.ts";
import { checkDescriptor, isContiguous } from "./descriptors.ts";
import { DEFAULT_TASKS_MAX, type ServerOptions } from "./server_options.ts";
import { createStream } from "./stream_factory.ts";
import { GraphRegistry } from "../graph/graph_registry.ts";
import type { CapturedGraph } from "../graph/graph.ts";
import { endProfile, startProfile } from "../profile/profiles.ts";
import { ExclusiveLock } from "../client/exclusive.ts";
import type { ComputeServer, ServerUtilities } from "./compute_server.ts";
import { acquireDevice } from "./device.ts";
import type {
  BufferBinding,
  CopyDescriptor,
  CubeCount,
  DeviceId,
  DeviceProperties,
  KernelArguments,
  LaunchMode,
  ManagedResource,
  ProfileDuration,
} from "./types.ts";

/** The WebGPU compute server of one device. */
export class WebGpuServer implements ComputeServer {
  /** The device. */
  readonly device: GPUDevice;
  /** Identity of the device. */
  readonly deviceId: DeviceId = { typeId: 4, indexId: 0 };
  #ctx: DeviceContext;
  #props: DeviceProperties;
  #utilities: ServerUtilities;
  #streams: (Stream | undefined)[] = [];
  #pools: PoolConfig[];
  #persistent: PersistentMemoryPolicy;
  #owned: boolean;
  #closed: DeviceLostError | null = null;
  #dryRun = 0;
  #maxStreams: number;
  #graphs: GraphRegistry;
  #exclusive = new ExclusiveLock();
  #streamOf = (slot: number): Stream => this.stream(slot);
  #deviceTiming: boolean;
  #logLaunch: boolean;
  #hostStaging = new HostStagingPool();
  /** Queues the device's uncaptured errors on the stream that acted last (removed at destroy: a caller's device outlives the server). */
  #onUncapturedError = (ev: Event): void => {
    if (this.#closed !== null) return;
    const error = (ev as GPUUncapturedErrorEvent).error;
    const target = this.#ctx.current ?? this.stream(0);
    target.pushError(new DeviceValidationError(`uncaptured device error: ${error.message}`, { cause: error }));
  };

  private constructor(device: GPUDevice, owned: boolean, props: DeviceProperties, options: ServerOptions) {
    this.device = device;
    this.#owned = owned;
    this.#props = props;
    const tasksMax = options.tasksMax ?? DEFAULT_TASKS_MAX;
    const maxStreams = options.maxStreams ?? 128;
    this.#maxStreams = maxStreams;
    if (!Number.isSafeInteger(tasksMax) || tasksMax < 1) {
      throw new RangeError(`createClient: tasksMax must be a positive integer, got ${tasksMax}`);
    }
    const openPassAhead = options.openPassAhead ?? !props.identity.isFallbackAdapter;
    if (typeof openPassAhead !== "boolean") {
      throw new TypeError(`createClient: openPassAhead must be a boolean, got ${String(openPassAhead)}`);
    }
    if (!Number.isSafeInteger(maxStreams) || maxStreams < 1) {
      throw new RangeError(`createClient: maxStreams must be a positive integer, got ${maxStreams}`);
    }
    this.#pools = resolveMemoryConfiguration(options.memory ?? "subslices", props.memory);
    this.#persistent = options.persistentMemory ?? "enabled";
    const logger = options.logger ? new ServerLogger(options.logger) : ServerLogger.fromEnv();
    this.#deviceTiming = props.features.timestampQuery && options.timing !== "system";
    this.#logLaunch = logger.launchesFull || logger.profiling === "minimal";
    this.#ctx = new DeviceContext({
      device,
      bindGroups: new BindGroupCache(device),
      pipelines: new PipelineCache(device, logger, {
        maxCubeDim: props.hardware.maxCubeDim,
        maxUnitsPerCube: props.hardware.maxUnitsPerCube,
        maxSharedMemory: props.hardware.maxSharedMemorySize,
        maxStorageBuffers: props.limits.maxStorageBuffersPerShaderStage ?? 8,
      }),
      settings: {
        tasksMax,
        openPassAhead,
        maxStreams,
        storageOffsetAlignment: props.limits.minStorageBufferOffsetAlignment ?? 256,
        alignment: props.memory.alignment,
        maxBufferSize: props.memory.maxBufferSize,
        uploadChunkThreshold: 8 * 1024 * 1024,
        uploadChunkSize: 4 * 1024 * 1024,
      },
      logger,
    });
    this.#utilities = { properties: props, logger, layoutPolicy: new ContiguousLayoutPolicy(props.memory.alignment) };
    this.#graphs = new GraphRegistry(device, this.#ctx.settings.storageOffsetAlignment);
    device.addEventListener("uncapturederror", this.#onUncapturedError);
    device.lost.then((info) => {
      this.#lose(
        new DeviceLostError(
          info.reason === "destroyed"
            ? "the device was destroyed; create a new client to continue"
            : `the device was lost (${info.message}); create a new client to continue`,
          { reason: info.reason === "destroyed" ? "destroyed" : "unknown" },
        ),
      );
    });
  }

  /**
   * Requests a device and builds a server on it.
   *
   * @param options Device, batching, stream, memory and logger options.
   * @returns The server.
   */
  static async create(options: ServerOptions = {}): Promise<WebGpuServer> {
    const acquired = await acquireDevice(options);
    return new WebGpuServer(acquired.device, acquired.owned, acquired.properties, options);
  }

  /** Device properties. */
  get properties(): DeviceProperties {
    return this.#props;
  }

  /** Settings in force (`tasksMax`, `openPassAhead`, `maxStreams`, alignments). */
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

  /** True once the device is lost or the server destroyed. */
  get closed(): boolean {
    return this.#closed !== null;
  }

  /** True while a dry run is open: launches only compile, and new pages get no memory until used. */
  get dryRun(): boolean {
    return this.#dryRun > 0;
  }

  /**
   * Opens (`+1`) or closes (`-1`) a dry-run window; windows nest.
   *
   * @param delta `1` to open, `-1` to close.
   */
  dryRunDepth(delta: 1 | -1): void {
    this.#dryRun = Math.max(0, this.#dryRun + delta);
  }

  /** Host staging memory lent by `staging()`. */
  get hostStaging(): HostStagingPool {
    return this.#hostStaging;
  }

  /** Throws the `DeviceLostError` when the device is gone. */
  checkAlive(): void {
    if (this.#closed !== null) throw this.#closed;
  }

  /**
   * The stream slot of a stream id, created on first use.
   *
   * @param id The stream id.
   * @returns The stream.
   */
  stream(id: StreamId): Stream {
    const slot = slotOf(id, this.#ctx.settings.maxStreams);
    const s = this.#streams[slot];
    if (s !== undefined) return s;
    checkStreamId(id, "stream");
    return this.#createStream(slot);
  }

  #createStream(slot: number): Stream {
    const stream = createStream({
      slot,
      ctx: this.#ctx,
      pools: this.#pools,
      persistentMemory: this.#persistent,
      alignment: this.#props.memory.alignment,
      maxBufferSize: this.#props.memory.maxBufferSize,
      deviceTiming: this.#deviceTiming,
      resolveOwner: (binding) => this.#resolve(binding),
    });
    this.#streams[slot] = stream;
    return stream;
  }

  utilities(): ServerUtilities {
    return this.#utilities;
  }

  logger(): ServerLogger {
    return this.#utilities.logger;
  }

  stage(): "downstream" {
    return "downstream";
  }

  initializeMemory(memory: ManagedMemory, size: number, stream: StreamId): void {
    this.checkAlive();
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new RangeError(`initializeMemory: size must be a non-negative integer, got ${size}`);
    }
    if (memory.slice !== null) throw new TypeError(`initializeMemory: memory ${memory.id} is already initialized`);
    const mm = this.stream(stream).memory;
    const reserved = mm.reserve(size, this.#dryRun > 0);
    mm.bind(reserved, memory);
    if (this.#ctx.logger.memoryFull) {
      this.#ctx.logger.log("memory", `stream ${stream}: reserved ${size} B for memory ${memory.id}`);
    }
  }

  #resolve(binding: BufferBinding): Slice {
    return this.stream(binding.stream).memory.resolve(binding.memory);
  }

  read(descriptors: readonly CopyDescriptor[], stream: StreamId): Promise<Uint8Array[]> {
    try {
      this.checkAlive();
      this.stream(stream).refuseWhileRecording("read");
      if (!Array.isArray(descriptors)) throw new TypeError("read: descriptors must be an array of CopyDescriptor");
      const items = descriptors.map((d, i) => {
        const size = checkDescriptor(d, `read[${i}]`);
        if (!isContiguous(d.shape, d.strides)) {
          throw new IoError(
            "unsupported-strides",
            `read: strides [${d.strides}] are not contiguous for shape [${d.shape}]`,
          );
        }
        return { slice: this.#resolve(d.binding), offset: d.binding.offsetStart, size };
      });
      return this.#ctx.guard(this.stream(stream).read(items));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId): void {
    this.checkAlive();
    const s = this.stream(stream);
    if (s.recorder !== null) {
      s.pushError(
        new GraphStateError("write", "a write inside a capture window is not recorded; the capture will fail"),
      );
      return;
    }
    if (!Array.isArray(writes)) throw new TypeError("write: writes must be an array of [CopyDescriptor, Uint8Array]");
    writes.forEach(([d, bytes], i) => {
      const size = checkDescriptor(d, `write[${i}]`);
      if (!(bytes instanceof Uint8Array) || bytes.byteLength !== size) {
        throw new RangeError(`write[${i}]: ${bytes?.byteLength} B given for a descriptor of ${size} B`);
      }
    });
    for (const [d, bytes] of writes) {
      const owner = this.stream(d.binding.stream);
      if (!isContiguous(d.shape, d.strides)) {
        owner.pushError(
          new IoError("unsupported-strides", `write: strides [${d.strides}] are not contiguous for shape [${d.shape}]`),
        );
        return;
      }
      let slice: Slice;
      try {
        slice = this.#resolve(d.binding);
      } catch (e) {
        owner.pushError(e as ServerError);
        return;
      }
      // Bytes between the view's end and the next word may belong to other views of the reservation.
      const end = d.binding.offsetStart + bytes.byteLength;
      const exact = end % 4 !== 0 && end < d.binding.size;
      s.write(slice, d.binding.offsetStart, bytes, d.binding.stream, exact);
    }
  }

  async sync(stream: StreamId): Promise<void> {
    this.checkAlive();
    this.stream(stream).refuseWhileRecording("sync");
    const s = this.stream(stream);
    await this.#ctx.guard(s.sync());
    const logger = this.#ctx.logger;
    if (s.profiler !== null && logger.profiling !== "disabled" && logger.profiling !== "minimal") {
      await s.profiler.collect();
      for (const t of s.profiler.takeAll()) logger.registerProfiled(t.name, t.end - t.start);
    }
  }

  /**
   * Runs `fn` with the server held exclusively: other exclusive sections and
   * profiles wait; nested calls from inside `fn` run at once.
   *
   * @param fn The section.
   * @returns What `fn` returns.
   */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.#exclusive.run(fn);
  }

  getResource(binding: BufferBinding, stream: StreamId): ManagedResource {
    this.checkAlive();
    this.stream(stream).submit();
    const slice = this.#resolve(binding);
    this.stream(stream).settlePage(slice.page);
    const memory = binding.memory;
    memory.pin();
    let released = false;
    return {
      buffer: slice.page.storage.resource!,
      offset: slice.offset + binding.offsetStart,
      size: binding.size - binding.offsetStart - binding.offsetEnd,
      release() {
        if (released) return;
        released = true;
        memory.unpin();
      },
    };
  }

  launch(kernel: Kernel, count: CubeCount, args: KernelArguments, mode: LaunchMode, stream: StreamId): void {
    if (!(kernel instanceof Kernel)) throw new TypeError("launch: kernel must come from defineKernel()");
    if (!Array.isArray(args?.buffers)) throw new TypeError(`launch(${kernel.name}): args.buffers must be an array`);
    const info = args.info !== undefined && args.info.length > 0 ? args.info : null;
    if (count.kind === "static") {
      this.launchRaw(kernel, args.buffers, info, count.x, count.y, count.z, null, mode, stream);
    } else {
      this.launchRaw(kernel, args.buffers, info, 1, 1, 1, count.binding, mode, stream);
    }
  }

  /**
   * The allocation-free form of `launch` used by the client: the same
   * semantics, with the count and arguments spread out.
   *
   * @param kernel The kernel.
   * @param buffers Storage bindings in order.
   * @param info Non-empty info words, or null.
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect Memory holding `[x, y, z]`, or null for a static count.
   * @param mode `execute` or `skip`.
   * @param stream The launching stream.
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
    if (this.#closed !== null) throw this.#closed;
    if (indirect === null && (x === 0 || y === 0 || z === 0)) return;
    const s = (stream < this.#maxStreams ? this.#streams[stream] : undefined) ?? this.stream(stream);
    const ctx = this.#ctx;
    let entry;
    try {
      entry = ctx.pipelines.get(kernel, buffers.length, info !== null);
    } catch (e) {
      if (e instanceof ResourceLimitError) {
        s.pushError(e);
        return;
      }
      throw e;
    }
    if (this.#logLaunch) {
      ctx.logger.log(
        "launch",
        `${s.label}: executing ${kernel.name} [${x}, ${y}, ${z}]${
          mode === "skip" || this.#dryRun > 0 ? " (skip)" : ""
        }`,
      );
    }
    if (mode === "skip" || this.#dryRun > 0) {
      if (entry.state !== "valid") s.watchPipeline(entry);
      return;
    }
    s.launch(entry, buffers, info, x, y, z, indirect);
  }

  flush(stream: StreamId): Promise<void> {
    try {
      this.checkAlive();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#ctx.guard(this.stream(stream).flush());
  }

  memoryUsage(stream: StreamId): MemoryUsage {
    this.checkAlive();
    const s = this.stream(stream);
    s.submit();
    return s.memory.usage();
  }

  memoryReport(stream: StreamId): MemoryReport {
    this.checkAlive();
    const s = this.stream(stream);
    s.submit();
    return s.memory.report();
  }

  memoryCleanup(stream: StreamId): void {
    this.checkAlive();
    const s = this.stream(stream);
    s.submit();
    s.memory.cleanup(true);
    s.staging.clear();
    this.#hostStaging.clear();
  }

  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void {
    this.checkAlive();
    if (mode !== "auto" && mode !== "persistent") {
      throw new TypeError(`allocationMode: mode must be "auto" or "persistent", got ${String(mode)}`);
    }
    const s = this.stream(stream);
    s.submit();
    s.memory.setMode(mode);
  }

  staging(sizes: readonly number[], _stream: StreamId): Uint8Array[] {
    this.checkAlive();
    for (const size of sizes) {
      if (!Number.isSafeInteger(size) || size < 0) {
        throw new RangeError(`staging: sizes must be non-negative integers, got ${size}`);
      }
    }
    return this.#hostStaging.lend(sizes);
  }

  async startProfile(stream: StreamId): Promise<ProfilingToken> {
    this.checkAlive();
    return await this.#ctx.guard(startProfile(this.stream(stream)));
  }

  async endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration> {
    this.checkAlive();
    const d = await this.#ctx.guard(endProfile(this.stream(token?.stream ?? stream), token));
    return { method: d.method, ticks: this.#ctx.guard(d.ticks), dispatches: this.#ctx.guard(d.dispatches) };
  }

  graphPrepare(stream: StreamId): void {
    this.checkAlive();
    this.#graphs.prepare(this.stream(stream));
  }

  /**
   * Disarms a prepared or recording capture without building a graph (used
   * when the captured function throws). The stream becomes usable as before.
   *
   * @param stream The stream.
   */
  graphAbort(stream: StreamId): void {
    this.#graphs.abort(this.stream(stream));
  }

  async beginCapture(stream: StreamId): Promise<void> {
    this.checkAlive();
    await this.#ctx.guard(this.#graphs.begin(this.stream(stream)));
  }

  async endCapture(stream: StreamId): Promise<GraphId> {
    this.checkAlive();
    return await this.#ctx.guard(this.#graphs.end(this.stream(stream)));
  }

  replay(graph: GraphId, stream: StreamId): void {
    this.checkAlive();
    this.#graphs.replay(graph, this.stream(stream), this.#streamOf);
  }

  /**
   * The captured graph of an id and the stream it replays on, for clients
   * that replay it often (undefined when unknown or destroyed).
   *
   * @param graph The graph.
   * @returns The graph and its stream.
   */
  capturedGraph(graph: GraphId): { graph: CapturedGraph; stream: Stream } | undefined {
    const g = this.#graphs.get(graph);
    return g === undefined ? undefined : { graph: g, stream: this.stream(g.slot) };
  }

  graphDestroy(graph: GraphId, _stream: StreamId): void {
    if (this.#closed !== null) return;
    this.#graphs.destroy(graph, this.#streamOf);
  }

  /** Graphs alive on this server. */
  get graphCount(): number {
    return this.#graphs.size;
  }

  streamIds(): StreamId[] {
    const ids: StreamId[] = [];
    this.#streams.forEach((s, i) => {
      if (s !== undefined) ids.push(i);
    });
    return ids;
  }

  installMemoryPools(config: MemoryConfiguration, stream: StreamId): void {
    this.checkAlive();
    const pools = resolveMemoryConfiguration(config, this.#props.memory);
    this.#pools = pools;
    const s = this.stream(stream);
    s.submit();
    s.memory.installPools(pools);
  }

  commInit(_devices: readonly DeviceId[]): void {
    throw new UnsupportedError(
      "commInit: collectives are not supported yet; copy through the host with read and write",
    );
  }

  allReduce(): void {
    throw new UnsupportedError("allReduce: collectives are not supported yet");
  }

  send(): void {
    throw new UnsupportedError("send: collectives are not supported yet");
  }

  recv(): void {
    throw new UnsupportedError("recv: collectives are not supported yet");
  }

  syncCollective(_stream: StreamId): void {
    throw new UnsupportedError("syncCollective: collectives are not supported yet");
  }

  #lose(error: DeviceLostError): void {
    this.#closed ??= error;
    this.#ctx.markLost(error);
  }

  /**
   * Submits every stream, then destroys the device when the server created
   * it; a device the caller passed in stays usable, and the server stops
   * listening to its errors. Pending promises reject, and later calls throw,
   * `DeviceLostError` (`destroyed`). Destroying twice is a no-op.
   */
  destroy(): void {
    if (this.#closed !== null) return;
    for (const s of this.#streams) {
      try {
        s?.submit();
      } catch {
        // a broken stream must not keep the device alive
      }
    }
    this.#lose(
      new DeviceLostError("the client was destroyed; create a new client to continue", { reason: "destroyed" }),
    );
    this.#graphs.clear();
    for (const s of this.#streams) s?.destroy();
    this.device.removeEventListener("uncapturederror", this.#onUncapturedError);
    if (this.#owned) this.device.destroy();
  }
}
