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
 * The stream keeps the launch, replay and submit paths; its other parts live
 * beside it: binding resolution, indirect count sources, held work, writes,
 * reads, the error queue and the replay loop.
 *
 * @module
 */

import { GraphStateError, type ServerError } from "../errors.ts";
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
import { CommandQueue, type QueueHost } from "./command_queue.ts";
import { recordLaunch } from "../graph/record.ts";
import type { StreamId } from "../ids.ts";
import { ErrorQueue } from "./error_queue.ts";
import { HeldWork } from "./held_work.ts";
import { BindingResolver } from "./binding_resolver.ts";
import { IndirectCounts, type IndirectSource } from "./indirect_counts.ts";
import { StreamWriter } from "./stream_writer.ts";
import { encodeReplay } from "./graph_replay.ts";

/** The resolved bindings of a pipeline's last launch (see `Stream.launch`). */
interface LaunchMemo {
  stream: Stream;
  bindings: BufferBinding[];
  slices: Slice[];
  bindGroup: GPUBindGroup;
  infoBytes: number;
  arenaId: number;
}

/** Resolves a binding's descriptor through its owner stream (slow path). */
export type OwnerResolver = (binding: BufferBinding) => Slice;

/** A stream slot. */
export class Stream implements QueueHost {
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
  /** The encoder, open pass and submission queue. */
  readonly queue: CommandQueue;
  #ctx: DeviceContext;
  /** Resolves a binding's slice through the stream that owns it. */
  readonly resolveOwner: OwnerResolver;
  #reader: StreamReader;
  #writer: StreamWriter;
  #arena: InfoArena;
  #errors: ErrorQueue;
  #bindings: BindingResolver;
  #indirects: IndirectCounts;
  #held: HeldWork;
  #pinsPending: ManagedMemory[] = [];
  #dyn = new Uint32Array(1);
  #tasksMax: number;

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
    this.resolveOwner = parts.resolveOwner;
    const s = parts.ctx.settings;
    this.#tasksMax = s.tasksMax;
    this.systemProfiler = new SystemProfiler(parts.slot);
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
    this.queue = new CommandQueue(parts.ctx, this, this.#arena);
    const ctx = parts.ctx;
    const errors = this.#errors = new ErrorQueue({
      slot: parts.slot,
      onDrain: (drained) => {
        this.profiler?.fail(drained);
        this.systemProfiler.fail(drained);
        this.onDrain?.(drained);
      },
    });
    const pins = this.#pinsPending;
    this.#bindings = new BindingResolver({ stream: this, ctx, errors, pins });
    this.#indirects = new IndirectCounts({ stream: this, ctx, bindings: this.#bindings });
    this.#held = new HeldWork({
      stream: this,
      ctx,
      errors,
      pins,
      dyn: this.#dyn,
      pushInfo: (info) => this.#pushInfo(info),
      markPages: (pages) => this.#markPages(pages),
    });
    this.#writer = new StreamWriter({ stream: this, ctx, held: this.#held });
  }

  /** The device's bind group cache (its scratch arrays hold the last resolved bindings). */
  get bindGroups(): DeviceContext["bindGroups"] {
    return this.#ctx.bindGroups;
  }

  /** True when commands are encoded, finished or held and not yet submitted. */
  get hasWork(): boolean {
    return this.queue.hasWork || this.#held.current !== null || this.#held.releasing;
  }

  /** Dispatches encoded since the last submit. */
  get tasks(): number {
    return this.queue.tasks;
  }

  /** True while launches are held back waiting for pipeline validations. */
  get holding(): boolean {
    return this.#held.current !== null;
  }

  /**
   * Timestamp writes for the next pass while profiling (submitting first
   * when the query set is full), or null.
   *
   * @param label The pass label.
   * @returns The descriptor, or null.
   */
  timedPass(label: string): GPUComputePassDescriptor | null {
    if (!this.timestamping || this.profiler === null) return null;
    let d = this.profiler.passDescriptor(label);
    if (d === null) {
      this.submit(); // the query set is full: resolve it, then start a new one
      d = this.profiler.passDescriptor(label)!;
    }
    return d;
  }

  /**
   * Throws when the stream is recording a graph (reads, syncs and profiles
   * cannot be recorded).
   *
   * @param what The refused call, for the error.
   * @throws {GraphStateError} While recording.
   */
  refuseWhileRecording(what: string): void {
    if (this.recorder !== null) {
      throw new GraphStateError(
        what,
        "the stream is recording a graph; reads, syncs and profiles are refused until endCapture",
      );
    }
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
    this.#errors.track(p);
  }

  /** Waits until every tracked check has settled. */
  settle(): Promise<void> {
    return this.#errors.settle();
  }

  /** Empties the error queue and returns what it held. */
  drainErrors(): ServerError[] {
    return this.#errors.drain();
  }

  /** Drains the error queue, throwing `ServerUnhealthyError` when it held anything. */
  throwIfUnhealthy(): void {
    this.#errors.throwIfAny();
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
    this.#errors.watchPipeline(entry);
  }

  /**
   * Resolves bindings into the bind group cache's scratch arrays and marks
   * their pages used. Returns -1 (after queuing a `LaunchError` `io`) when a
   * binding is stale, else the number of bindings owned by another stream,
   * pinned into `pins` (by default, until the next submission completes).
   *
   * @param bindings The bindings.
   * @param n How many of them.
   * @param kernel Kernel name, for errors.
   * @param pins Where cross-stream pins go.
   * @returns -1, or the number of cross-stream bindings.
   */
  resolveBindings(bindings: readonly BufferBinding[], n: number, kernel: string, pins?: ManagedMemory[]): number {
    return this.#bindings.resolve(bindings, n, kernel, pins);
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
      recordLaunch(this, this.recorder, { entry, bindings, info, x, y, z, indirect });
      return;
    }
    if (indirect !== null && this.#indirects.full) this.submit();
    if (info !== null && info.length * 4 > this.#arena.capacity) {
      this.submit(); // grow the arena only when nothing queued or held can refer to it
      const old = this.#arena.id;
      if (this.#arena.ensure(info.length * 4)) this.#ctx.bindGroups.evictStorage(old);
    }
    // Held launches keep their own copy of the info words; they enter the arena when encoded.
    const hold = this.#held.current !== null || entry.state !== "valid";
    let offset = -1;
    if (info !== null && !hold) offset = this.#pushInfo(info);
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
      const cross = this.#bindings.resolve(bindings, n, entry.kernel.name);
      if (cross < 0) return;
      const cache = this.#ctx.bindGroups;
      bindGroup = info === null
        ? cache.get(entry.layoutId, entry.layout, n, null, 0, 0)
        : cache.get(entry.layoutId, entry.layout, n, this.#arena.buffer, arenaId, infoBytes);
      if (cross === 0) {
        // Remember these bindings for the next launch, reusing the memo's arrays (no allocation per launch).
        let m = entry.memo as LaunchMemo | null;
        if (m === null) entry.memo = m = { stream: this, bindings: [], slices: [], bindGroup, infoBytes, arenaId };
        for (let i = 0; i < n; i++) {
          m.bindings[i] = bindings[i]!;
          m.slices[i] = bindings[i]!.memory.slice!;
        }
        m.stream = this;
        m.bindGroup = bindGroup;
        m.infoBytes = infoBytes;
        m.arenaId = arenaId;
      }
    }
    let source: (IndirectSource & { page: Page }) | null = null;
    if (indirect !== null) {
      source = this.#indirects.source(indirect, n, entry.kernel.name);
      if (source === null) return;
    }
    if (hold) {
      const pages: Page[] = [];
      for (let i = 0; i < n; i++) pages.push(bindings[i]!.memory.slice!.page);
      // The count page too: a write into the counts must wait for this dispatch.
      if (source !== null) pages.push(source.page);
      const words = info === null
        ? null
        : new Uint32Array(info.buffer.slice(info.byteOffset, info.byteOffset + info.byteLength));
      this.#held.hold({
        kind: "launch",
        entry,
        bindGroup,
        pages,
        info: words,
        x,
        y,
        z,
        indirect: source,
      });
      return;
    }
    let dynamic: Uint32Array | null = null;
    if (info !== null) (dynamic = this.#dyn)[0] = offset;
    this.encodeDispatch(entry.pipeline, bindGroup, dynamic, x, y, z, source, entry.kernel.name);
  }

  /**
   * Encodes one resolved dispatch into the open pass (opening one when
   * needed), counts it, closes its pass while profiling, and submits every
   * `tasksMax` dispatches. Launches, released held launches and replays that
   * cannot take the tight loop all end here. Positional arguments: it runs
   * once per launch, and an options object would be an allocation per launch.
   *
   * @param pipeline The pipeline.
   * @param bindGroup The bind group of group 0.
   * @param dynamic Its one dynamic offset (the info words), or null.
   * @param x Workgroups along x (ignored with `indirect`).
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect Where the counts are read from, or null.
   * @param name Kernel name, for the profiler.
   */
  encodeDispatch(
    pipeline: GPUComputePipeline,
    bindGroup: GPUBindGroup,
    dynamic: Uint32Array | null,
    x: number,
    y: number,
    z: number,
    indirect: IndirectSource | null,
    name: string,
  ): void {
    const q = this.queue;
    const pass = q.pass ?? q.openPass();
    q.setPipeline(pass, pipeline);
    q.setBindGroup(pass, bindGroup, dynamic);
    if (indirect !== null) pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
    else pass.dispatchWorkgroups(x, y, z);
    q.commands++;
    if (this.timestamping) this.#closeTimedPass(name);
    if (++q.tasks >= this.#tasksMax) this.submit();
  }

  /** Appends info words to the arena (submitting first when it is full) and returns their offset. */
  #pushInfo(info: InfoWords): number {
    let offset = this.#arena.push(info);
    if (offset < 0) {
      this.submit();
      offset = this.#arena.push(info);
    }
    return offset;
  }

  /** Waits until held work, if any, can be released without isolation. */
  awaitHeld(): Promise<void> {
    return this.#held.whenKnown();
  }

  /**
   * Copies bytes between buffers in stream order (held while launches are).
   *
   * @param page The storage page involved (marked used again if the copy is held), or null.
   * @param src Source buffer.
   * @param srcOffset Source offset.
   * @param dst Destination buffer.
   * @param dstOffset Destination offset.
   * @param size Bytes (a multiple of 4).
   */
  copy(page: Page | null, src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number): void {
    const held = this.#held.current;
    if (held !== null) held.ops.push({ kind: "copy", page, src, srcOffset, dst, dstOffset, size });
    else this.queue.encoder().copyBufferToBuffer(src, srcOffset, dst, dstOffset, size);
  }

  /** While profiling, each dispatch has its own pass: name it and close it. */
  #closeTimedPass(name: string): void {
    this.profiler!.noteDispatch(name);
    this.queue.endPass();
  }

  /** Marks pages used by the batch being encoded (held work re-marks them when it is released). */
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
    const q = this.queue;
    const n = graph.tasks.length;
    // The common case in one tight loop: nothing held, no segment, no profile,
    // no indirect-count copy that would break the pass, and room in the batch.
    if (
      this.#held.current === null && q.segment === null && !this.timestamping && !graph.copies &&
      q.tasks + n < this.#tasksMax
    ) {
      this.#markPages(graph.pages);
      encodeReplay(q, graph.tasks, q.pass ?? q.openPass());
      q.commands += n;
      q.tasks += n;
      return;
    }
    if (this.#held.current !== null) this.#held.releaseNow();
    if (q.segment !== null) q.switchSegment(null);
    this.#markPages(graph.pages);
    for (const t of graph.tasks) {
      const indirect = t.indirect;
      if (t.copyFrom !== null) {
        q.encoder().copyBufferToBuffer(t.copyFrom.buffer, t.copyFrom.offset, indirect!.buffer, indirect!.offset, 12);
      }
      this.encodeDispatch(t.pipeline, t.bindGroup, t.dynamic, t.x, t.y, t.z, indirect, t.name);
      if (q.tasks === 0) this.#markPages(graph.pages); // it submitted: the next batch uses the pages too
    }
  }

  /**
   * Resolves the binding of an indirect count (after `resolveBindings` filled
   * the scratch arrays for bindings `[0, n)`), pinning it into `pins` when
   * another stream owns it. Returns null (after queuing a `LaunchError` `io`)
   * when the binding is stale.
   *
   * @param binding The count's binding.
   * @param n Storage bindings of the launch.
   * @param kernel Kernel name, for errors.
   * @param pins Where a cross-stream pin goes.
   * @returns The slice, and whether its buffer is also bound as storage by
   * this launch (WebGPU forbids that usage conflict: the count must be copied).
   */
  resolveIndirect(
    binding: BufferBinding,
    n: number,
    kernel: string,
    pins?: ManagedMemory[],
  ): { slice: Slice; conflict: boolean } | null {
    return this.#bindings.resolveIndirect(binding, n, kernel, pins);
  }

  /** Ends the open pass, if any (before copies, resolves, or a profile boundary). */
  endPass(): void {
    this.queue.endPass();
  }

  /**
   * Submits everything encoded (releasing held work first, with isolation
   * when validations are still pending), then records the submission: its
   * index for cross-stream pins, the new epoch, deferred buffer destruction.
   */
  submit(): void {
    if (this.#held.current !== null) this.#held.releaseNow();
    const q = this.queue;
    q.endPass();
    if (this.profiler !== null && this.profiler.unresolved) this.profiler.resolve(q.encoder());
    const ctx = this.#ctx;
    const n = q.submit();
    if (n === 0) {
      // The work that took these pins was never dispatched (for example a kernel that failed to compile).
      for (const desc of this.#pinsPending) desc.unpin();
      this.#pinsPending.length = 0;
      this.storage.flush();
      return;
    }
    ctx.submitIndex++;
    this.epoch++;
    for (const desc of this.#pinsPending) ctx.pinUntil(ctx.submitIndex, desc);
    this.#pinsPending.length = 0;
    this.#indirects.reset();
    this.storage.flush();
    if (ctx.logger.launches) {
      ctx.logger.log("stream", `${this.label}: submit #${ctx.submitIndex} (${n} command buffers)`);
    }
    this.profiler?.submitted();
    q.prepareNext();
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
   * each chunk. With `exact`, a length that is not a multiple of 4 leaves the
   * bytes after it untouched (the last word is merged on the device);
   * otherwise those bytes, which belong to no one, may be zeroed.
   *
   * @param slice The destination slice.
   * @param offset Byte offset inside the slice (a multiple of 4).
   * @param data The bytes (exactly the bytes to write).
   * @param owner The stream that owns the memory.
   * @param exact Keep the bytes after `data` intact.
   */
  write(slice: Slice, offset: number, data: Uint8Array, owner: StreamId, exact = false): void {
    this.#ctx.current = this;
    this.#writer.write(slice, offset, data, owner, exact);
  }

  /**
   * Submits, then waits for the device queue to drain (one completion wait),
   * and drains the error queue.
   *
   * @throws {ServerUnhealthyError} When errors were queued.
   */
  async sync(): Promise<void> {
    this.#ctx.current = this;
    await this.awaitHeld();
    this.submit();
    const target = this.#ctx.submitIndex;
    await this.#ctx.queue.onSubmittedWorkDone();
    this.#ctx.completed(target);
    await this.#drain();
  }

  /**
   * Submits, waits for pending validation results (no device wait), and
   * drains the error queue.
   *
   * @throws {ServerUnhealthyError} When errors were queued.
   */
  flush(): Promise<void> {
    if (this.#held.current === null) {
      this.submit(); // at once, so a caller that does not await still gets its work submitted
      return this.#drain();
    }
    return this.awaitHeld().then(() => {
      this.submit();
      return this.#drain();
    });
  }

  /** Waits for pending checks, then throws `ServerUnhealthyError` when errors were queued. */
  async #drain(): Promise<void> {
    await this.#errors.settle();
    this.#errors.throwIfAny();
  }

  /** Drops encoded work and GPU objects (client teardown). */
  destroy(): void {
    this.#held.drop();
    this.queue.discard();
    this.#arena.buffer.destroy();
    this.#indirects.destroy();
    this.staging.clear();
    this.profiler?.destroy();
    this.storage.destroyAll();
  }
}
