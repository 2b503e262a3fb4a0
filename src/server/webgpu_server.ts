/**
 * `WebGpuServer`: the `ComputeServer` on Deno's WebGPU. It keeps the launch
 * path, the stream lookup and the device's lifecycle, and routes every other
 * call to the helper serving it (transfers, memory, draining calls, graphs).
 *
 * @module
 */

import { slotOf } from "../_util/slot.ts";
import { DeviceLostError, DeviceValidationError, ResourceLimitError, UnsupportedError } from "../errors.ts";
import { checkStreamId, type GraphId, type ProfilingToken, type StreamId } from "../ids.ts";
import type { ServerLogger } from "../logger.ts";
import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { HostStagingPool } from "../memory/host_staging.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import type { Stream } from "../stream/stream.ts";
import type { GraphRegistry } from "./graph_registry.ts";
import type { CapturedGraph } from "../graph/graph.ts";
import { ExclusiveLock } from "../_util/exclusive_lock.ts";
import type { ComputeServer, ServerUtilities } from "../contract/compute_server.ts";
import { acquireDevice } from "./device.ts";
import type { DrainingCalls } from "./draining_calls.ts";
import type { HostTransfers } from "./host_transfers.ts";
import { logLaunch, spreadLaunch } from "./launch_args.ts";
import { checkLaunch, type LaunchLimits } from "../contract/launch_checks.ts";
import type { ServerMemory } from "./server_memory.ts";
import type { ServerOptions } from "./server_options.ts";
import { deviceLostError, setUpServer } from "./server_setup.ts";
import type { StreamSlots } from "./stream_slots.ts";
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
} from "../contract/types.ts";
import type { InfoWords } from "../contract/types.ts";
import type { MemoryAllocationMode, MemoryConfiguration, MemoryReport, MemoryUsage } from "../contract/memory_types.ts";
import type { Kernel } from "../contract/kernel.ts";

/** The WebGPU compute server of one device. */
export class WebGpuServer implements ComputeServer {
  /** The device. */
  readonly device: GPUDevice;
  /** Identity of the device. */
  readonly deviceId: DeviceId = { typeId: 4, indexId: 0 };
  #ctx: DeviceContext;
  #utilities: ServerUtilities;
  #slots: StreamSlots;
  /** The slots' streams by index (the launch path reads them directly). */
  #streams: (Stream | undefined)[];
  #owned: boolean;
  #closed: DeviceLostError | null = null;
  #dryRun = 0;
  #maxStreams: number;
  #logLaunch: boolean;
  #hostStaging: HostStagingPool;
  #transfers: HostTransfers;
  #memory: ServerMemory;
  #drains: DrainingCalls;
  #graphs: GraphRegistry;
  #exclusive = new ExclusiveLock();
  /** What the launch door checks against. */
  #limits: LaunchLimits;
  #streamOf = (slot: number): Stream => this.stream(slot);
  /** What the device's loss reaction reaches (see the constructor). */
  #lossTarget: { server: WebGpuServer | null } = { server: this };
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
    const parts = setUpServer({ server: this, device, properties: props, options });
    this.#ctx = parts.ctx;
    this.#utilities = parts.utilities;
    this.#slots = parts.slots;
    this.#streams = parts.slots.streams;
    this.#maxStreams = parts.ctx.settings.maxStreams;
    this.#logLaunch = parts.logLaunch;
    this.#hostStaging = parts.hostStaging;
    this.#transfers = parts.transfers;
    this.#memory = parts.memory;
    this.#drains = parts.drains;
    this.#graphs = parts.graphs;
    this.#limits = {
      owner: this,
      maxCount: props.hardware.maxCubeCount[0],
      maxBinding: props.memory.maxPageSize,
      storageAlign: props.limits.minStorageBufferOffsetAlignment ?? 256,
    };
    device.addEventListener("uncapturederror", this.#onUncapturedError);
    // The loss reaction reaches the server through a holder cleared at destroy:
    // a caller's device outlives its clients and must not keep them alive.
    const target = this.#lossTarget;
    device.lost.then((info) => {
      const server = target.server;
      if (server !== null) server.#lose(deviceLostError(info));
    });
  }

  /**
   * Requests a device and builds a server on it.
   *
   * @param options Device, batching, stream, memory and logger options.
   * @returns The server.
   * @throws {RangeError} For refused options (see `setUpServer`); a device
   * requested for it is destroyed first.
   */
  static async create(options: ServerOptions = {}): Promise<WebGpuServer> {
    const acquired = await acquireDevice(options);
    try {
      return new WebGpuServer(acquired.device, acquired.owned, acquired.properties, options);
    } catch (e) {
      // Refused options: a device the runtime requested would otherwise stay alive, unreachable.
      if (acquired.owned) acquired.device.destroy();
      throw e;
    }
  }

  /** Device properties. */
  get properties(): DeviceProperties {
    return this.#utilities.properties;
  }

  /**
   * Settings in force (`tasksMax`, `openPassAhead`, `maxStreams`, alignments).
   *
   * @ignore
   */
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

  /**
   * Host staging memory lent by `staging()`.
   *
   * @ignore
   */
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
   *
   * @ignore
   */
  stream(id: StreamId): Stream {
    const slot = slotOf(id, this.#ctx.settings.maxStreams);
    const s = this.#streams[slot];
    if (s !== undefined) return s;
    checkStreamId(id, "stream");
    return this.#slots.create(slot);
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
    this.#memory.initialize(memory, size, stream, this.#dryRun > 0);
  }

  read(descriptors: readonly CopyDescriptor[], stream: StreamId): Promise<Uint8Array[]> {
    return this.#transfers.read(descriptors, stream);
  }

  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId): void {
    this.#transfers.write(writes, stream);
  }

  sync(stream: StreamId): Promise<void> {
    return this.#drains.sync(stream);
  }

  /**
   * Runs `fn` with the server held exclusively: other exclusive sections and
   * profiles wait; nested calls from inside `fn` run at once.
   *
   * @param fn The section.
   * @returns What `fn` returns; rejects with `DeviceLostError`, without
   * running `fn`, once the device is gone.
   */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    // Checked when the section gets the lock: one queued behind a section that destroyed the server must not run.
    return this.#exclusive.run(() => {
      this.checkAlive();
      return fn();
    });
  }

  getResource(binding: BufferBinding, stream: StreamId): ManagedResource {
    return this.#transfers.getResource(binding, stream);
  }

  launch(kernel: Kernel, count: CubeCount, args: KernelArguments, mode: LaunchMode, stream: StreamId): void {
    spreadLaunch(this, kernel, count, args, mode, stream);
  }

  /**
   * The allocation-free form of `launch` used by the client: the same
   * semantics, with the count and arguments spread out. Every launch passes
   * here, and every argument is checked here (`checkLaunch`), whichever
   * entry it came through.
   *
   * @param kernel The kernel.
   * @param buffers Storage bindings in order.
   * @param info Info words (empty or null for none).
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect Memory holding `[x, y, z]`, or null for a static count.
   * @param mode `execute` or `skip`.
   * @param stream The launching stream.
   * @throws {TypeError} {RangeError} {ResourceLimitError} For a bad argument (see `checkLaunch`).
   * @throws {DeviceLostError} Once the device is gone.
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
    checkLaunch(this.#limits, kernel, buffers, info, x, y, z, indirect, mode);
    if (this.#closed !== null) throw this.#closed;
    if (info !== null && info.length === 0) info = null;
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
    if (this.#logLaunch) logLaunch(ctx.logger, s.label, kernel.name, x, y, z, mode === "skip" || this.#dryRun > 0);
    if (mode === "skip" || this.#dryRun > 0) {
      if (entry.state !== "valid") s.watchPipeline(entry);
      // A launch the dry run skips while recording would be missing from the graph: endCapture fails.
      if (this.#dryRun > 0 && s.recorder !== null) s.recorder.dryRunSkips++;
      return;
    }
    s.dispatch.launch(entry, buffers, info, x, y, z, indirect);
  }

  flush(stream: StreamId): Promise<void> {
    return this.#drains.flush(stream);
  }

  memoryUsage(stream: StreamId): MemoryUsage {
    return this.#memory.usage(stream);
  }

  memoryReport(stream: StreamId): MemoryReport {
    return this.#memory.report(stream);
  }

  memoryCleanup(stream: StreamId): void {
    this.#memory.cleanup(stream);
  }

  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void {
    this.#memory.setMode(mode, stream);
  }

  staging(sizes: readonly number[], _stream: StreamId): Uint8Array[] {
    return this.#transfers.staging(sizes);
  }

  startProfile(stream: StreamId): Promise<ProfilingToken> {
    return this.#drains.startProfile(stream);
  }

  endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration> {
    return this.#drains.endProfile(stream, token);
  }

  graphPrepare(stream: StreamId): void {
    this.checkAlive();
    this.#graphs.prepare(this.stream(stream), this.#dryRun > 0);
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

  beginCapture(stream: StreamId): Promise<void> {
    return this.#drains.beginCapture(stream, this.#dryRun > 0);
  }

  endCapture(stream: StreamId): Promise<GraphId> {
    return this.#drains.endCapture(stream);
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
   *
   * @ignore
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
    return this.#slots.ids();
  }

  installMemoryPools(config: MemoryConfiguration, stream: StreamId): void {
    this.#memory.installPools(config, stream);
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
    this.#slots.submitAll();
    this.#lose(
      new DeviceLostError("the client was destroyed; create a new client to continue", { reason: "destroyed" }),
    );
    this.#lossTarget.server = null;
    this.#ctx.pipelines.release();
    this.#graphs.clear();
    this.#slots.destroyAll();
    this.device.removeEventListener("uncapturederror", this.#onUncapturedError);
    if (this.#owned) this.device.destroy();
  }
}
