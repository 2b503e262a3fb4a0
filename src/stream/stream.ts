/**
 * One stream slot: its command encoder and open compute pass, its finished
 * command buffers waiting for submission, its memory, info arena, staging
 * buffers and error queue. All streams submit to the device's one `GPUQueue`.
 *
 * The launch path, in steady state: a bind group cache hit, info words
 * appended to the arena, then `setPipeline` (only when it changes),
 * `setBindGroup` and `dispatchWorkgroups` into the already open pass. The pass
 * ends and the stream submits every `tasksMax` dispatches, and at read, write,
 * sync, profile and flush points.
 *
 * Ordering across streams: each page remembers the stream whose unsubmitted
 * work last used it. A stream that binds, reads or writes a page another
 * stream still holds unsubmitted work on submits that stream first; bindings of
 * memory owned by another stream stay pinned until the consuming submission
 * has completed.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { DeviceValidationError, IoError, LaunchError, type ServerError, ServerUnhealthyError } from "../errors.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { ManagedMemory, Page, Slice } from "../memory/managed_memory.ts";
import type { MemoryManager } from "../memory/memory_manager.ts";
import type { WebGpuStorage } from "../memory/webgpu_storage.ts";
import type { BufferBinding } from "../server/types.ts";
import { CaptureStateMachine } from "../graph/capture_state.ts";
import type { CapturedGraph, GraphRecorder } from "../graph/graph.ts";
import type { TimestampProfiler } from "../profile/timestamp_profiler.ts";
import { SystemProfiler } from "../profile/system_profiler.ts";
import type { DeviceContext } from "./device_context.ts";
import { InfoArena, type InfoWords } from "./info_arena.ts";
import { StagingPool } from "./staging_pool.ts";
import { StreamReader } from "./stream_reader.ts";

const INDIRECT_BYTES = 4096;

interface Finished {
  cb: GPUCommandBuffer;
  entry: PipelineEntry | null;
}

/** The resolved bindings of a pipeline's last launch (see `Stream.launch`). */
interface LaunchMemo {
  stream: Stream;
  bindings: readonly BufferBinding[];
  slices: Slice[];
  bindGroup: GPUBindGroup;
  infoBytes: number;
  arenaId: number;
}

/** Resolves a binding's descriptor through its owner stream (slow path). */
export type OwnerResolver = (binding: BufferBinding) => Slice;

/** A stream slot. */
export class Stream {
  /** Slot index. */
  readonly slot: number;
  /** Label prefix of its GPU objects, e.g. `"stream 0"`. */
  readonly label: string;
  /** Main memory (storage buffers). */
  readonly memory: MemoryManager;
  /** Storage behind `memory`. */
  readonly storage: WebGpuStorage;
  /** Read staging buffers. */
  readonly staging: StagingPool;
  /** Number of submits so far; work encoded now belongs to batch `epoch`. */
  epoch = 0;
  /** Graph capture state. */
  readonly capture: CaptureStateMachine = new CaptureStateMachine();
  /** The recording in progress while `capture.state` is `recording`. */
  recorder: GraphRecorder | null = null;
  /** Device timestamp profiler, when the device has `timestamp-query`. */
  profiler: TimestampProfiler | null = null;
  /** Host-clock profiles (devices without `timestamp-query`). */
  readonly systemProfiler: SystemProfiler;
  /** True while every dispatch gets its own timestamped pass (a profile is open). */
  timestamping = false;
  /** Called with the errors whenever the error queue is drained (profiles fail on it). */
  onDrain: ((errors: readonly ServerError[]) => void) | null = null;
  #ctx: DeviceContext;
  #resolveOwner: OwnerResolver;
  #reader: StreamReader;
  #encoder: GPUCommandEncoder | null = null;
  #encoderNo = 0;
  #pass: GPUComputePassEncoder | null = null;
  #commands = 0;
  #tasks = 0;
  #segment: PipelineEntry | null = null;
  #finished: Finished[] = [];
  #arena: InfoArena;
  #errors: ServerError[] = [];
  #checks = new Set<Promise<unknown>>();
  #pendingLaunches = new Map<PipelineEntry, number>();
  #pinsPending: ManagedMemory[] = [];
  #lastPipeline: GPUComputePipeline | null = null;
  #dyn = new Uint32Array(1);
  #indirect: GPUBuffer | null = null;
  #tasksMax: number;
  #passDescriptor: GPUComputePassDescriptor;
  #indirectUsed = 0;

  /**
   * Creates the instance.
   *
   * @param parts Slot, shared context, memory and the owner resolver.
   */
  constructor(parts: {
    slot: number;
    ctx: DeviceContext;
    memory: MemoryManager;
    storage: WebGpuStorage;
    resolveOwner: OwnerResolver;
  }) {
    this.slot = parts.slot;
    this.label = `stream ${parts.slot}`;
    this.#ctx = parts.ctx;
    this.memory = parts.memory;
    this.storage = parts.storage;
    this.#resolveOwner = parts.resolveOwner;
    const s = parts.ctx.settings;
    this.#tasksMax = s.tasksMax;
    this.systemProfiler = new SystemProfiler(parts.slot);
    this.#passDescriptor = { label: `${this.label} pass` };
    this.#arena = new InfoArena(parts.ctx.device, {
      capacity: Math.max(64 * 1024, Math.min(s.tasksMax, 1024) * s.storageOffsetAlignment),
      alignment: s.storageOffsetAlignment,
      label: `${this.label} info arena`,
    });
    this.staging = new StagingPool(parts.ctx.device, {
      label: this.label,
      maxBufferSize: s.maxBufferSize,
    });
    this.#reader = new StreamReader(this, parts.ctx);
  }

  /** True when commands are encoded or finished and not yet submitted. */
  get hasWork(): boolean {
    return this.#commands > 0 || this.#finished.length > 0;
  }

  /** Dispatches encoded since the last submit. */
  get tasks(): number {
    return this.#tasks;
  }

  /** Errors queued and not yet drained. */
  get queuedErrors(): number {
    return this.#errors.length;
  }

  /** Queues an error; it is raised by the next draining call. */
  pushError(error: ServerError): void {
    this.#errors.push(error);
  }

  /** Tracks a promise that may queue errors; draining calls wait for it first. */
  track(p: Promise<unknown>): void {
    const tracked = p.catch(() => {}).finally(() => this.#checks.delete(tracked));
    this.#checks.add(tracked);
  }

  /** Waits until every tracked check has settled. */
  async settle(): Promise<void> {
    while (this.#checks.size > 0) await Promise.all(this.#checks);
  }

  /** Empties the error queue and returns what it held. */
  drainErrors(): ServerError[] {
    const errors = this.#errors;
    this.#errors = [];
    if (errors.length > 0) {
      this.profiler?.fail(errors);
      this.systemProfiler.fail(errors);
      this.onDrain?.(errors);
    }
    return errors;
  }

  /** Drains the error queue, throwing `ServerUnhealthyError` when it held anything. */
  throwIfUnhealthy(): void {
    if (this.#errors.length > 0) throw new ServerUnhealthyError(this.slot, this.drainErrors());
  }

  /**
   * Marks that the work being encoded uses `page`, submitting the stream
   * that holds unsubmitted work on it first when that is another stream.
   */
  usePage(page: Page): void {
    const owner = page.useStream as Stream | null;
    if (owner !== this) {
      if (owner !== null && page.useEpoch === owner.epoch && owner.hasWork) owner.submit();
      page.useStream = this;
    }
    page.useEpoch = this.epoch;
  }

  /** Submits whichever stream holds unsubmitted work on `page` (before a `writeBuffer`). */
  settlePage(page: Page): void {
    const owner = page.useStream as Stream | null;
    if (owner !== null && page.useEpoch === owner.epoch && owner.hasWork) owner.submit();
  }

  /** Notes that a launch whose pipeline is still being validated was encoded or skipped. */
  watchPipeline(entry: PipelineEntry): void {
    const n = this.#pendingLaunches.get(entry);
    if (n !== undefined) {
      this.#pendingLaunches.set(entry, n + 1);
      return;
    }
    this.#pendingLaunches.set(entry, 1);
    this.track(entry.checked.then(() => {
      const count = this.#pendingLaunches.get(entry) ?? 0;
      this.#pendingLaunches.delete(entry);
      if (entry.state === "failed") { for (let i = 0; i < count; i++) this.#errors.push(entry.error!); }
    }));
  }

  /**
   * Resolves bindings into the bind group cache's scratch arrays. Returns -1
   * (after queuing an `IoError`) when a binding is stale, else the number of
   * bindings owned by another stream (pinned until their submission completes).
   */
  #resolveBindings(bindings: readonly BufferBinding[], n: number, kernel: string): number {
    let cross = 0;
    const cache = this.#ctx.bindGroups;
    const ids = cache.ids;
    const offsets = cache.offsets;
    const sizes = cache.sizes;
    const buffers = cache.buffers;
    const maxStreams = this.#ctx.settings.maxStreams;
    for (let i = 0; i < n; i++) {
      const b = bindings[i]!;
      const desc = b.memory;
      let slice = desc.slice;
      if (slice === null || slice.owner !== desc || slice.page.storage.resource === null) {
        try {
          slice = this.#resolveOwner(b);
        } catch (e) {
          this.#errors.push(
            e instanceof IoError
              ? new LaunchError("io", kernel, `${kernel}: binding ${i}: ${e.message}`, { cause: e })
              : e as ServerError,
          );
          return -1;
        }
      }
      const page = slice.page;
      if (page.useStream !== this || page.useEpoch !== this.epoch) this.usePage(page);
      const owner = b.stream < maxStreams ? b.stream : b.stream % maxStreams;
      if (owner !== this.slot) {
        desc.pin();
        this.#pinsPending.push(desc);
        cross++;
      }
      ids[i] = page.storage.id;
      offsets[i] = slice.offset + b.offsetStart;
      sizes[i] = alignUp(b.size - b.offsetStart - b.offsetEnd, 4);
      buffers[i] = page.storage.resource!;
    }
    return cross;
  }

  /**
   * Encodes one dispatch (or records nothing when the static count is empty).
   *
   * @param entry The compiled pipeline.
   * @param bindings Storage bindings, in binding order.
   * @param info Info words, or null.
   * @param x Workgroups along x (ignored with `indirect`).
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect A binding holding three u32 workgroup counts, or null.
   */
  launch(
    entry: PipelineEntry,
    bindings: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
  ): void {
    this.#ctx.current = this;
    if (this.recorder !== null) {
      this.#record(entry, bindings, info, x, y, z, indirect);
      return;
    }
    if (indirect !== null && this.#indirectUsed + 16 > INDIRECT_BYTES) this.submit();
    let offset = -1;
    if (info !== null) {
      offset = this.#arena.push(info);
      if (offset < 0) {
        this.submit();
        const old = this.#arena.id;
        if (this.#arena.ensure(info.length * 4)) this.#ctx.bindGroups.evictStorage(old);
        offset = this.#arena.push(info);
      }
    }
    const n = entry.buffers;
    const infoBytes = info === null ? 0 : info.length * 4;
    const arenaId = info === null ? 0 : this.#arena.id;
    let bindGroup: GPUBindGroup | null = null;
    // Fast path: the same handles as this pipeline's last launch on this stream,
    // still owning the same slices: reuse the bind group, only track page use.
    const memo = entry.memo as LaunchMemo | null;
    if (
      memo !== null && memo.stream === this && memo.infoBytes === infoBytes && memo.arenaId === arenaId &&
      indirect === null
    ) {
      const mb = memo.bindings;
      const ms = memo.slices;
      let i = 0;
      while (i < n && bindings[i] === mb[i] && bindings[i]!.memory.slice === ms[i]) i++;
      if (i === n) {
        const epoch = this.epoch;
        for (i = 0; i < n; i++) {
          const page = ms[i]!.page;
          if (page.useStream !== this || page.useEpoch !== epoch) this.usePage(page);
        }
        bindGroup = memo.bindGroup;
      }
    }
    if (bindGroup === null) {
      const cross = this.#resolveBindings(bindings, n, entry.kernel.name);
      if (cross < 0) return;
      const cache = this.#ctx.bindGroups;
      bindGroup = info === null
        ? cache.get(entry.layoutId, entry.layout, n, null, 0, 0)
        : cache.get(entry.layoutId, entry.layout, n, this.#arena.buffer, arenaId, infoBytes);
      if (cross === 0) {
        const slices: Slice[] = [];
        for (let i = 0; i < n; i++) slices.push(bindings[i]!.memory.slice!);
        entry.memo = { stream: this, bindings: bindings.slice(0, n), slices, bindGroup, infoBytes, arenaId };
      }
    }
    let indirectBuffer: GPUBuffer | null = null;
    let indirectOffset = 0;
    if (indirect !== null) {
      const r = this.#indirectSource(indirect, n, entry.kernel.name);
      if (r === null) return;
      indirectBuffer = r.buffer;
      indirectOffset = r.offset;
    }
    let segment: PipelineEntry | null = null;
    if (entry.state !== "valid") {
      this.watchPipeline(entry);
      segment = entry;
    }
    if (segment !== this.#segment) this.#switchSegment(segment);
    const pass = this.#pass ?? this.#openPass();
    if (entry.pipeline !== this.#lastPipeline) {
      pass.setPipeline(entry.pipeline);
      this.#lastPipeline = entry.pipeline;
    }
    if (info === null) pass.setBindGroup(0, bindGroup);
    else {
      this.#dyn[0] = offset;
      pass.setBindGroup(0, bindGroup, this.#dyn, 0, 1);
    }
    if (indirectBuffer !== null) pass.dispatchWorkgroupsIndirect(indirectBuffer, indirectOffset);
    else pass.dispatchWorkgroups(x, y, z);
    this.#commands++;
    if (this.timestamping) this.#closeTimedPass(entry.kernel.name);
    if (++this.#tasks >= this.#tasksMax) this.submit();
  }

  /** While profiling, each dispatch has its own pass: name it and close it. */
  #closeTimedPass(name: string): void {
    this.profiler!.noteDispatch(name);
    this.endPass();
  }

  /** Records a launch, fully resolved, into the graph being captured (nothing is encoded). */
  #record(
    entry: PipelineEntry,
    bindings: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
  ): void {
    const recorder = this.recorder!;
    const n = entry.buffers;
    const name = entry.kernel.name;
    const pinsFrom = this.#pinsPending.length;
    if (this.#resolveBindings(bindings, n, name) < 0) return;
    for (const pin of this.#pinsPending.splice(pinsFrom)) recorder.pins.push(pin);
    const cache = this.#ctx.bindGroups;
    const pages: Page[] = [];
    for (let i = 0; i < n; i++) pages.push(bindings[i]!.memory.slice!.page);
    let source: { buffer: GPUBuffer; offset: number; page: Page; copy: boolean } | null = null;
    if (indirect !== null) {
      let slice: Slice;
      try {
        slice = this.#resolveOwner(indirect);
      } catch (e) {
        this.#errors.push(
          new LaunchError("io", name, `${name}: indirect count: ${(e as Error).message}`, { cause: e }),
        );
        return;
      }
      const page = slice.page;
      const copy = cache.ids.slice(0, n).includes(page.storage.id);
      source = { buffer: page.storage.resource!, offset: slice.offset + indirect.offsetStart, page, copy };
    }
    if (entry.state !== "valid") this.watchPipeline(entry);
    recorder.dispatches.push({
      entry,
      buffers: cache.buffers.slice(0, n),
      offsets: cache.offsets.slice(0, n),
      sizes: cache.sizes.slice(0, n),
      pages,
      info: info === null
        ? null
        : new Uint32Array(info.buffer.slice(info.byteOffset, info.byteOffset + info.byteLength)),
      x,
      y,
      z,
      indirect: source,
    });
  }

  #markPages(pages: readonly Page[]): void {
    const epoch = this.epoch;
    for (const page of pages) if (page.useStream !== this || page.useEpoch !== epoch) this.usePage(page);
  }

  /**
   * Re-encodes a graph's dispatches into the open pass (prebuilt pipelines and
   * bind groups), submitting every `tasksMax` dispatches like launches do.
   *
   * @param graph The graph, captured on this stream.
   */
  replay(graph: CapturedGraph): void {
    this.#ctx.current = this;
    if (this.#segment !== null) this.#switchSegment(null);
    this.#markPages(graph.pages);
    const tasks = graph.tasks;
    const max = this.#tasksMax;
    let pass = this.#pass ?? this.#openPass();
    let last = this.#lastPipeline;
    for (let i = 0; i < tasks.length; i++) {
      const t = tasks[i]!;
      const indirect = t.indirect;
      if (t.copyFrom !== null) {
        this.#lastPipeline = last;
        this.encoderForCopy().copyBufferToBuffer(
          t.copyFrom.buffer,
          t.copyFrom.offset,
          indirect!.buffer,
          indirect!.offset,
          12,
        );
        pass = this.#openPass();
        last = null;
      }
      if (t.pipeline !== last) {
        pass.setPipeline(t.pipeline);
        last = t.pipeline;
      }
      if (t.dynamic === null) pass.setBindGroup(0, t.bindGroup);
      else pass.setBindGroup(0, t.bindGroup, t.dynamic, 0, 1);
      if (indirect === null) pass.dispatchWorkgroups(t.x, t.y, t.z);
      else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
      this.#commands++;
      if (this.timestamping || ++this.#tasks >= max) {
        this.#lastPipeline = last;
        if (this.timestamping) {
          this.#closeTimedPass(t.name);
          if (++this.#tasks >= max) this.submit();
        } else this.submit();
        if (this.#tasks === 0) this.#markPages(graph.pages);
        pass = this.#pass ?? this.#openPass();
        last = this.#lastPipeline;
      }
    }
    this.#lastPipeline = last;
  }

  /**
   * The buffer and offset to dispatch indirectly from. When the count lives in
   * a buffer also bound as writable storage (same page), it is copied to a
   * stream-owned indirect buffer first: WebGPU forbids that usage conflict.
   */
  #indirectSource(binding: BufferBinding, n: number, kernel: string): { buffer: GPUBuffer; offset: number } | null {
    let slice: Slice;
    try {
      slice = this.#resolveOwner(binding);
    } catch (e) {
      this.#errors.push(
        new LaunchError("io", kernel, `${kernel}: indirect count: ${(e as Error).message}`, { cause: e }),
      );
      return null;
    }
    this.usePage(slice.page);
    const buffer = slice.page.storage.resource!;
    const offset = slice.offset + binding.offsetStart;
    const ids = this.#ctx.bindGroups.ids;
    let conflict = false;
    for (let i = 0; i < n; i++) if (ids[i] === slice.page.storage.id) conflict = true;
    if (!conflict) return { buffer, offset };
    if (this.#indirect === null) {
      this.#indirect = this.#ctx.device.createBuffer({
        label: `${this.label} indirect counts`,
        size: INDIRECT_BYTES,
        usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST,
      });
    }
    const at = this.#indirectUsed;
    this.#indirectUsed += 16;
    this.encoderForCopy().copyBufferToBuffer(buffer, offset, this.#indirect, at, 12);
    return { buffer: this.#indirect, offset: at };
  }

  #switchSegment(segment: PipelineEntry | null): void {
    if (this.#commands > 0) this.#finishEncoder();
    this.#segment = segment;
  }

  #finishEncoder(): void {
    if (this.#pass !== null) {
      this.#pass.end();
      this.#pass = null;
    }
    if (this.#encoder === null) return;
    const device = this.#ctx.device;
    const entry = this.#segment;
    device.pushErrorScope("validation");
    const cb = this.#encoder.finish({ label: `${this.label} commands #${this.#encoderNo}` });
    const popped = device.popErrorScope();
    this.track(popped.then(async (err) => {
      if (err === null) return;
      if (entry !== null) await entry.checked;
      if (entry === null || entry.state !== "failed") this.#errors.push(this.#batchError(err, entry));
    }));
    this.#encoder = null;
    this.#finished.push({ cb, entry });
    this.#commands = 0;
    this.#lastPipeline = null;
  }

  #batchError(err: GPUError, entry: PipelineEntry | null): ServerError {
    return entry === null
      ? new DeviceValidationError(`${this.label}: a submitted batch failed validation: ${err.message}`, { cause: err })
      : new LaunchError(
        "unknown",
        entry.kernel.name,
        `${entry.kernel.name}: dispatch failed validation: ${err.message}`,
        { cause: err },
      );
  }

  #encoderNow(): GPUCommandEncoder {
    if (this.#encoder === null) {
      this.#encoderNo++;
      this.#encoder = this.#ctx.device.createCommandEncoder({ label: `${this.label} encoder #${this.#encoderNo}` });
    }
    return this.#encoder;
  }

  #openPass(): GPUComputePassEncoder {
    let descriptor: GPUComputePassDescriptor = this.#passDescriptor;
    if (this.timestamping) {
      let timed = this.profiler!.passDescriptor(this.#passDescriptor.label!);
      if (timed === null) {
        this.submit(); // the query set is full: resolve it, then start a new one
        timed = this.profiler!.passDescriptor(this.#passDescriptor.label!)!;
      }
      descriptor = timed;
    }
    this.#pass = this.#encoderNow().beginComputePass(descriptor);
    this.#lastPipeline = null;
    return this.#pass;
  }

  /** Ends the open pass, if any (before copies, resolves, or a profile boundary). */
  endPass(): void {
    if (this.#pass !== null) {
      this.#pass.end();
      this.#pass = null;
      this.#lastPipeline = null;
    }
  }

  /** Returns the encoder with no pass open, ready for a copy; counts one command. */
  encoderForCopy(): GPUCommandEncoder {
    if (this.#segment !== null) this.#switchSegment(null);
    this.endPass();
    this.#commands++;
    return this.#encoderNow();
  }

  /**
   * Ends the pass, uploads the info arena and submits everything encoded.
   * Dispatches of pipelines whose validation is still pending are submitted
   * alone, so their failure cannot invalidate other work; those known to have
   * failed are dropped (their compile error is already queued).
   */
  submit(): void {
    this.endPass();
    if (this.profiler !== null && this.profiler.unresolved) this.profiler.resolve(this.encoderForCopy());
    if (this.#commands === 0 && this.#finished.length === 0) {
      this.#pinsPending.length = 0;
      this.storage.flush();
      return;
    }
    const ctx = this.#ctx;
    this.#arena.upload(ctx.queue);
    if (this.#commands > 0) this.#finishEncoder();
    const items = this.#finished;
    this.#finished = [];
    let normal: GPUCommandBuffer[] = [];
    const submitNormal = () => {
      if (normal.length === 0) return;
      ctx.device.pushErrorScope("validation");
      ctx.queue.submit(normal);
      const popped = ctx.device.popErrorScope();
      this.track(popped.then((err) => {
        if (err !== null) this.#errors.push(this.#batchError(err, null));
      }));
      normal = [];
    };
    for (const item of items) {
      const entry = item.entry;
      if (entry === null || entry.state === "valid") {
        normal.push(item.cb);
        continue;
      }
      submitNormal();
      if (entry.state === "failed") continue;
      ctx.device.pushErrorScope("validation");
      ctx.queue.submit([item.cb]);
      const popped = ctx.device.popErrorScope();
      this.track(popped.then(async (err) => {
        if (err === null) return;
        await entry.checked;
        if (entry.state !== "failed") this.#errors.push(this.#batchError(err, entry));
      }));
    }
    submitNormal();
    ctx.submitIndex++;
    this.epoch++;
    for (const desc of this.#pinsPending) ctx.pinUntil(ctx.submitIndex, desc);
    this.#pinsPending.length = 0;
    this.#tasks = 0;
    this.#indirectUsed = 0;
    this.#segment = null;
    this.storage.flush();
    if (ctx.logger.launches) {
      ctx.logger.log("stream", `${this.label}: submit #${ctx.submitIndex} (${items.length} command buffers)`);
    }
    this.profiler?.submitted();
    // Open the next encoder and pass now, at a flush point, so the next launch
    // pays neither (tens of µs each on some drivers).
    if (ctx.lost === null && !this.timestamping) this.#openPass();
  }

  /**
   * Copies ranges into staging buffers and resolves with their bytes after one
   * completion wait shared by every read requested in the same tick.
   */
  read(items: readonly { slice: Slice; offset: number; size: number }[]): Promise<Uint8Array[]> {
    this.#ctx.current = this;
    return this.#reader.read(items);
  }

  /**
   * Writes bytes into a resolved slice, ordered after every queued use of its
   * page. Uploads above the chunk threshold are split, with a submit after
   * each chunk.
   *
   * @param slice The destination slice.
   * @param offset Byte offset inside the slice.
   * @param data The bytes (exactly the bytes to write).
   */
  write(slice: Slice, offset: number, data: Uint8Array): void {
    this.#ctx.current = this;
    if (data.byteLength === 0) return;
    const page = slice.page;
    this.settlePage(page);
    const buffer = page.storage.resource!;
    const at = slice.offset + offset;
    // Deno accepts views over SharedArrayBuffer too; the cast only satisfies the DOM typings.
    let src = data as Uint8Array<ArrayBuffer>;
    if (src.byteLength % 4 !== 0) {
      src = new Uint8Array(alignUp(data.byteLength, 4));
      src.set(data);
    }
    const queue = this.#ctx.queue;
    const { uploadChunkThreshold, uploadChunkSize } = this.#ctx.settings;
    if (src.byteLength <= uploadChunkThreshold) {
      queue.writeBuffer(buffer, at, src, 0, src.byteLength);
      return;
    }
    for (let done = 0; done < src.byteLength; done += uploadChunkSize) {
      const n = Math.min(uploadChunkSize, src.byteLength - done);
      queue.writeBuffer(buffer, at + done, src, done, n);
      queue.submit([]);
    }
  }

  /**
   * Submits, then waits for the device queue to drain (one completion wait),
   * and drains the error queue.
   *
   * @throws {ServerUnhealthyError} When errors were queued.
   */
  async sync(): Promise<void> {
    this.#ctx.current = this;
    this.submit();
    const target = this.#ctx.submitIndex;
    await this.#ctx.queue.onSubmittedWorkDone();
    this.#ctx.completed(target);
    await this.settle();
    this.throwIfUnhealthy();
  }

  /**
   * Submits, waits for pending validation results (no device wait), and
   * drains the error queue.
   *
   * @throws {ServerUnhealthyError} When errors were queued.
   */
  async flush(): Promise<void> {
    this.submit();
    await this.settle();
    this.throwIfUnhealthy();
  }

  /** Drops encoded work and GPU objects (client teardown). */
  destroy(): void {
    this.#pass = null;
    this.#encoder = null;
    this.#finished = [];
    this.#commands = 0;
    this.#arena.buffer.destroy();
    this.#indirect?.destroy();
    this.staging.clear();
    this.profiler?.destroy();
    this.storage.destroyAll();
  }
}
