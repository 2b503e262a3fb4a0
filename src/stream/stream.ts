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
import { slotOf } from "../_util/slot.ts";
import { GraphStateError, IoError, LaunchError, type ServerError, ServerUnhealthyError } from "../errors.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { ManagedMemory, Page, Slice } from "../memory/managed_memory.ts";
import type { MemoryManager } from "../memory/memory_manager.ts";
import type { WebGpuStorage } from "../memory/webgpu_storage.ts";
import type { BufferBinding } from "../server/types.ts";
import { CaptureStateMachine } from "../graph/capture_state.ts";
import type { CapturedGraph, GraphRecorder, ReplayTask } from "../graph/graph.ts";
import type { TimestampProfiler } from "../profile/timestamp_profiler.ts";
import { SystemProfiler } from "../profile/system_profiler.ts";
import type { DeviceContext } from "./device_context.ts";
import { InfoArena, type InfoWords } from "./info_arena.ts";
import { StagingPool } from "./staging_pool.ts";
import { StreamReader } from "./stream_reader.ts";
import { CommandQueue, type QueueHost } from "./command_queue.ts";
import { recordLaunch } from "../graph/record.ts";
import { BYTE_PATCH_KERNEL, tailWord } from "./byte_patch.ts";
import type { StreamId } from "../ids.ts";
import { Speculation } from "./speculation.ts";

const INDIRECT_BYTES = 4096;
/** Dispatches held while validations are pending before a submit is forced. */
const HOLD_LIMIT = 16384;

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
  #arena: InfoArena;
  #errors: ServerError[] = [];
  #checks = new Set<Promise<unknown>>();
  #pendingLaunches = new Map<PipelineEntry, number>();
  #pinsPending: ManagedMemory[] = [];
  #dyn = new Uint32Array(1);
  #indirect: GPUBuffer | null = null;
  #tasksMax: number;
  #indirectUsed = 0;
  #held: Speculation | null = null;
  /** True while `#release` encodes held work (which may still bind memory freed during the hold). */
  #releasing = false;

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
  }

  /** The device's bind group cache (its scratch arrays hold the last resolved bindings). */
  get bindGroups(): DeviceContext["bindGroups"] {
    return this.#ctx.bindGroups;
  }

  /** True when commands are encoded, finished or held and not yet submitted. */
  get hasWork(): boolean {
    return this.queue.hasWork || this.#held !== null || this.#releasing;
  }

  /** Dispatches encoded since the last submit. */
  get tasks(): number {
    return this.queue.tasks;
  }

  /** True while launches are held back waiting for pipeline validations. */
  get holding(): boolean {
    return this.#held !== null;
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
  resolveBindings(
    bindings: readonly BufferBinding[],
    n: number,
    kernel: string,
    pins: ManagedMemory[] = this.#pinsPending,
  ): number {
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
          slice = this.resolveOwner(b);
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
      if (slotOf(b.stream, maxStreams) !== this.slot) {
        desc.pin();
        pins.push(desc);
        cross++;
      }
      const size = b.size - b.offsetStart - b.offsetEnd;
      if (size === 0) {
        // WebGPU cannot bind 0 bytes: bind a scratch buffer, so the kernel touches no one's memory.
        const scratch = this.#ctx.emptyBinding;
        ids[i] = scratch.id;
        offsets[i] = 0;
        sizes[i] = scratch.size;
        buffers[i] = scratch.buffer;
        continue;
      }
      const offset = slice.offset + b.offsetStart;
      if (offset % this.#ctx.settings.storageOffsetAlignment !== 0) {
        this.#errors.push(
          new LaunchError(
            "io",
            kernel,
            `${kernel}: binding ${i} starts at byte ${offset} of its buffer, not a multiple of minStorageBufferOffsetAlignment (${this.#ctx.settings.storageOffsetAlignment})`,
          ),
        );
        return -1;
      }
      ids[i] = page.storage.id;
      offsets[i] = offset;
      sizes[i] = alignUp(size, 4);
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
      recordLaunch(this, this.recorder, { entry, bindings, info, x, y, z, indirect });
      return;
    }
    if (indirect !== null && this.#indirectUsed + 16 > INDIRECT_BYTES) this.submit();
    if (info !== null && info.length * 4 > this.#arena.capacity) {
      this.submit(); // grow the arena only when nothing queued or held can refer to it
      const old = this.#arena.id;
      if (this.#arena.ensure(info.length * 4)) this.#ctx.bindGroups.evictStorage(old);
    }
    // Held launches keep their own copy of the info words; they enter the arena when encoded.
    const hold = this.#held !== null || entry.state !== "valid";
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
      const cross = this.resolveBindings(bindings, n, entry.kernel.name);
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
    let indirectBuffer: GPUBuffer | null = null;
    let indirectOffset = 0;
    let indirectPage: Page | null = null;
    if (indirect !== null) {
      const r = this.#indirectSource(indirect, n, entry.kernel.name);
      if (r === null) return;
      indirectBuffer = r.buffer;
      indirectOffset = r.offset;
      indirectPage = r.page;
    }
    if (hold) {
      const pages: Page[] = [];
      for (let i = 0; i < n; i++) pages.push(bindings[i]!.memory.slice!.page);
      // The count page too: a write into the counts must wait for this dispatch.
      if (indirectPage !== null) pages.push(indirectPage);
      const words = info === null
        ? null
        : new Uint32Array(info.buffer.slice(info.byteOffset, info.byteOffset + info.byteLength));
      this.#hold(entry, bindGroup, pages, words, x, y, z, indirectBuffer, indirectOffset);
      return;
    }
    const q = this.queue;
    const pass = q.pass ?? q.openPass();
    q.setPipeline(pass, entry.pipeline);
    if (info === null) q.setBindGroup(pass, bindGroup, null);
    else {
      this.#dyn[0] = offset;
      q.setBindGroup(pass, bindGroup, this.#dyn);
    }
    if (indirectBuffer !== null) pass.dispatchWorkgroupsIndirect(indirectBuffer, indirectOffset);
    else pass.dispatchWorkgroups(x, y, z);
    q.commands++;
    if (this.timestamping) this.#closeTimedPass(entry.kernel.name);
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

  /** Holds a launch back until the validations it waits for are known. */
  #hold(
    entry: PipelineEntry,
    bindGroup: GPUBindGroup,
    pages: Page[],
    info: Uint32Array | null,
    x: number,
    y: number,
    z: number,
    indirect: GPUBuffer | null,
    indirectOffset: number,
  ): void {
    let held = this.#held;
    const fresh = held === null;
    if (held === null) held = this.#held = new Speculation();
    if (entry.state !== "valid") {
      this.watchPipeline(entry);
      held.entries.add(entry);
    }
    held.ops.push({ kind: "launch", entry, bindGroup, pages, info, x, y, z, indirect, indirectOffset });
    if (fresh) this.#releaseWhenKnown(held);
    if (++held.launches >= HOLD_LIMIT) this.submit();
  }

  /** Releases held work, without isolation, as soon as every validation it waits for is known. */
  #releaseWhenKnown(held: Speculation): void {
    this.track(
      held.settled().then(() => {
        if (this.#held !== held) return;
        if (held.known) this.#release(false);
        else this.#releaseWhenKnown(held);
      }),
    );
  }

  /**
   * Encodes held work in order. Launches of failed pipelines are dropped;
   * with `isolate`, launches of still-pending pipelines get their own command
   * buffers; held writes are issued after submitting what precedes them.
   */
  #release(isolate: boolean): void {
    const held = this.#held;
    if (held === null) return;
    this.#held = null;
    // Submits in the middle must not find the stream idle: buffers freed during
    // the hold are destroyed only once every held launch that binds them is encoded.
    this.#releasing = true;
    try {
      this.#encodeHeld(held, isolate);
    } finally {
      this.#releasing = false;
    }
  }

  /** Encodes the ops of released held work in order (see `#release`). */
  #encodeHeld(held: Speculation, isolate: boolean): void {
    const q = this.queue;
    for (const op of held.ops) {
      if (op.kind === "copy") {
        if (op.page !== null) this.usePage(op.page);
        q.encoder().copyBufferToBuffer(op.src, op.srcOffset, op.dst, op.dstOffset, op.size);
        continue;
      }
      if (op.kind === "write") {
        this.submit();
        this.#ctx.queue.writeBuffer(op.buffer, op.offset, op.data);
        this.#pinsPending.push(op.memory); // its pin lasts until the write's submission completes
        continue;
      }
      const entry = op.entry;
      if (entry.state === "failed") continue;
      // Info first: pushing may submit a full arena, which ends the segment and
      // the batch; the segment and the page marks belong to the batch that encodes the dispatch.
      if (op.info !== null) this.#dyn[0] = this.#pushInfo(op.info);
      const segment = entry.state === "pending" && isolate ? entry : null;
      if (segment !== q.segment) q.switchSegment(segment);
      this.#markPages(op.pages); // the batch may have changed since the launch was held
      const pass = q.pass ?? q.openPass();
      q.setPipeline(pass, entry.pipeline);
      q.setBindGroup(pass, op.bindGroup, op.info === null ? null : this.#dyn);
      if (op.indirect !== null) pass.dispatchWorkgroupsIndirect(op.indirect, op.indirectOffset);
      else pass.dispatchWorkgroups(op.x, op.y, op.z);
      q.commands++;
      if (this.timestamping) this.#closeTimedPass(entry.kernel.name);
      if (++q.tasks >= this.#tasksMax) this.submit();
    }
  }

  /** Waits until held work, if any, can be released without isolation. */
  async awaitHeld(): Promise<void> {
    while (this.#held !== null && !this.#held.known) await this.#held.settled();
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
    if (this.#held !== null) this.#held.ops.push({ kind: "copy", page, src, srcOffset, dst, dstOffset, size });
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
      this.#held === null && q.segment === null && !this.timestamping && !graph.copies && q.tasks + n < this.#tasksMax
    ) {
      this.#markPages(graph.pages);
      this.#encodeReplay(graph.tasks, q.pass ?? q.openPass());
      q.commands += n;
      q.tasks += n;
      return;
    }
    if (this.#held !== null) this.#release(!this.#held.known);
    if (q.segment !== null) q.switchSegment(null);
    this.#markPages(graph.pages);
    const tasks = graph.tasks;
    const max = this.#tasksMax;
    let pass = q.pass ?? q.openPass();
    for (let i = 0; i < tasks.length; i++) {
      const t = tasks[i]!;
      const indirect = t.indirect;
      if (t.copyFrom !== null) {
        q.encoder().copyBufferToBuffer(t.copyFrom.buffer, t.copyFrom.offset, indirect!.buffer, indirect!.offset, 12);
        pass = q.openPass();
      }
      q.setPipeline(pass, t.pipeline);
      q.setBindGroup(pass, t.bindGroup, t.dynamic);
      if (indirect === null) pass.dispatchWorkgroups(t.x, t.y, t.z);
      else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
      q.commands++;
      if (this.timestamping || ++q.tasks >= max) {
        if (this.timestamping) {
          this.#closeTimedPass(t.name);
          if (++q.tasks >= max) this.submit();
        } else this.submit();
        if (q.tasks === 0) this.#markPages(graph.pages);
        pass = q.pass ?? q.openPass();
      }
    }
  }

  /**
   * Encodes replay tasks into `pass`, none of which copies (see `replay`).
   * The first task checks the pass state; the others follow the graph's own
   * precomputed pipeline changes and rebinds.
   */
  #encodeReplay(tasks: readonly ReplayTask[], pass: GPUComputePassEncoder): void {
    const n = tasks.length;
    if (n === 0) return;
    const q = this.queue;
    const first = tasks[0]!;
    q.setPipeline(pass, first.pipeline);
    q.setBindGroup(pass, first.bindGroup, first.dynamic);
    let indirect = first.indirect;
    if (indirect === null) pass.dispatchWorkgroups(first.x, first.y, first.z);
    else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
    for (let i = 1; i < n; i++) {
      const t = tasks[i]!;
      if (t.pipelineChanges) pass.setPipeline(t.pipeline);
      if (t.dynamic !== null) pass.setBindGroup(0, t.bindGroup, t.dynamic, 0, 1);
      else if (t.rebinds) pass.setBindGroup(0, t.bindGroup);
      indirect = t.indirect;
      if (indirect === null) pass.dispatchWorkgroups(t.x, t.y, t.z);
      else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
    }
    const last = tasks[n - 1]!;
    q.lastPipeline = last.pipeline;
    q.lastBindGroup = last.dynamic === null ? last.bindGroup : null;
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
    pins: ManagedMemory[] = this.#pinsPending,
  ): { slice: Slice; conflict: boolean } | null {
    let slice: Slice;
    try {
      slice = this.resolveOwner(binding);
    } catch (e) {
      this.#errors.push(
        new LaunchError("io", kernel, `${kernel}: indirect count: ${(e as Error).message}`, { cause: e }),
      );
      return null;
    }
    const maxStreams = this.#ctx.settings.maxStreams;
    if (slotOf(binding.stream, maxStreams) !== this.slot) {
      binding.memory.pin(); // another stream's memory: kept until the work that reads it is done
      pins.push(binding.memory);
    }
    const ids = this.#ctx.bindGroups.ids;
    const id = slice.page.storage.id;
    let conflict = false;
    for (let i = 0; i < n; i++) if (ids[i] === id) conflict = true;
    return { slice, conflict };
  }

  /**
   * The buffer and offset to dispatch indirectly from. When the count lives in
   * a buffer also bound as writable storage (same page), it is copied to a
   * stream-owned indirect buffer first: WebGPU forbids that usage conflict.
   */
  #indirectSource(
    binding: BufferBinding,
    n: number,
    kernel: string,
  ): { buffer: GPUBuffer; offset: number; page: Page } | null {
    const r = this.resolveIndirect(binding, n, kernel);
    if (r === null) return null;
    const slice = r.slice;
    this.usePage(slice.page);
    const buffer = slice.page.storage.resource!;
    const offset = slice.offset + binding.offsetStart;
    if (!r.conflict) return { buffer, offset, page: slice.page };
    if (this.#indirect === null) {
      this.#indirect = this.#ctx.device.createBuffer({
        label: `${this.label} indirect counts`,
        size: INDIRECT_BYTES,
        usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST,
      });
    }
    const at = this.#indirectUsed;
    this.#indirectUsed += 16;
    this.copy(slice.page, buffer, offset, this.#indirect, at, 12);
    return { buffer: this.#indirect, offset: at, page: slice.page };
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
    if (this.#held !== null) this.#release(!this.#held.known);
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
    this.#indirectUsed = 0;
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
    if (data.byteLength === 0) return;
    const tail = exact ? data.byteLength % 4 : 0;
    const body = tail === 0 ? data : data.subarray(0, data.byteLength - tail);
    if (body.byteLength > 0) this.#writeWords(slice, slice.offset + offset, body);
    if (tail > 0) {
      const word = slice.offset + offset + body.byteLength;
      const bindStart = word - (word % this.#ctx.settings.storageOffsetAlignment);
      const [keep, value] = tailWord(data, tail);
      const binding = {
        memory: slice.owner,
        offsetStart: bindStart - slice.offset,
        offsetEnd: 0,
        stream: owner,
        size: word + 4 - slice.offset,
      };
      const entry = this.#ctx.pipelines.get(BYTE_PATCH_KERNEL, 1, true);
      this.launch(entry, [binding], new Uint32Array([(word - bindStart) / 4, keep, value]), 1, 1, 1, null);
    }
  }

  #writeWords(slice: Slice, at: number, data: Uint8Array): void {
    const page = slice.page;
    const buffer = page.storage.resource!;
    if (this.#held !== null) {
      // Held launches may use this memory: hold the write too, with its own copy of the bytes.
      this.usePage(page); // others that use this memory submit this stream (and its held write) first
      const copy = new Uint8Array(alignUp(data.byteLength, 4));
      copy.set(data);
      slice.owner.pin(); // the memory must outlive a release before the held write is issued
      this.#held.ops.push({ kind: "write", buffer, offset: at, data: copy, memory: slice.owner });
      return;
    }
    this.settlePage(page);
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
    await this.awaitHeld();
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
  flush(): Promise<void> {
    if (this.#held === null) {
      this.submit(); // at once, so a caller that does not await still gets its work submitted
      return this.#drain();
    }
    return this.awaitHeld().then(() => {
      this.submit();
      return this.#drain();
    });
  }

  async #drain(): Promise<void> {
    await this.settle();
    this.throwIfUnhealthy();
  }

  /** Drops encoded work and GPU objects (client teardown). */
  destroy(): void {
    this.#held = null;
    this.queue.discard();
    this.#arena.buffer.destroy();
    this.#indirect?.destroy();
    this.staging.clear();
    this.profiler?.destroy();
    this.storage.destroyAll();
  }
}
