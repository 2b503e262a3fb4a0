/**
 * One stream slot: its command encoder and open compute pass, its finished
 * command buffers waiting for submission, its memory, info arena, staging
 * buffers and error queue. All streams submit to the device's one `GPUQueue`.
 *
 * The pass ends and the stream submits every `tasksMax` dispatches, and at
 * read, write, sync, profile and flush points.
 *
 * Ordering across streams: each page remembers the stream whose unsubmitted
 * work last used it. A stream that binds, reads or writes a page another
 * stream still holds unsubmitted work on submits that stream first; bindings of
 * memory owned by another stream stay pinned until the consuming submission
 * has completed.
 *
 * The stream keeps the submit path and the state its parts share; the parts
 * live beside it: dispatch encoding (launches and replays), binding
 * resolution, indirect count sources, held work, writes, reads and the error
 * queue.
 *
 * @module
 */

import { GraphStateError, type ServerError } from "../errors.ts";
import type { ManagedMemory, Page, Slice } from "../contract/managed_memory.ts";
import type { MemoryManager } from "../memory/memory_manager.ts";
import type { CountPool } from "../memory/count_pool.ts";
import type { WebGpuStorage } from "../memory/webgpu_storage.ts";
import { CaptureStateMachine } from "../graph/capture_state.ts";
import type { GraphRecorder, LaunchShape } from "../graph/graph.ts";
import type { TimestampProfiler } from "../profile/timestamp_profiler.ts";
import { SystemProfiler } from "../profile/system_profiler.ts";
import type { DeviceContext } from "./device_context.ts";
import { InfoArena } from "./info_arena.ts";
import { MIN_CLASS, ReadbackPool } from "../memory/readback_pool.ts";
import { SEGMENT_MIN_EARLY, StreamReader } from "./stream_reader.ts";
import { CommandQueue, type QueueHost } from "./command_queue.ts";
import type { StreamId } from "../ids.ts";
import { ErrorQueue } from "./error_queue.ts";
import { HeldWork } from "./held_work.ts";
import { BindingResolver } from "./binding_resolver.ts";
import { IndirectCounts } from "./indirect_counts.ts";
import { StreamWriter } from "./stream_writer.ts";
import { DispatchEncoder, type DispatchPaths } from "./dispatch_encoder.ts";
import type { OwnerResolver } from "./_stream_parts.ts";

/** A stream slot. */
export class Stream implements QueueHost {
  /** Slot index. */
  readonly slot: number;
  /** Label prefix of its GPU objects, e.g. `"stream 0"`. */
  readonly label: string;
  /** Main memory (storage buffers). */
  readonly memory: MemoryManager;
  /** Indirect counts made with `createCount`/`emptyCount`: pages apart from every storage binding. */
  readonly counts: CountPool;
  /** Storage behind `memory`. */
  readonly storage: WebGpuStorage;
  /** Read staging buffers. */
  readonly staging: ReadbackPool;

  /**
   * Primes read staging buffers for fast reads (small reads' and syncs'
   * classes), so that a loop of reads finds them ready from its first read;
   * when fast reads turn on, and for every stream made after. Where the
   * self-test verified reuse, a few per class do; else enough to cover the
   * ~11 ms each rests after a read.
   */
  stockStaging(): void {
    const reuse = this.staging.reuseCooling;
    this.staging.stock([SEGMENT_MIN_EARLY], reuse ? 8 : 128);
    this.staging.stock([MIN_CLASS], reuse ? 8 : 64);
  }
  /** Number of submits so far; work encoded now belongs to batch `epoch`. */
  epoch = 0;
  /** Graph capture state. */
  readonly capture: CaptureStateMachine = new CaptureStateMachine();
  /** The recording in progress while `capture.state` is `recording`. */
  recorder: GraphRecorder | null = null;
  /** The launches of the warm-up while `capture.state` is `prepared`, else null. */
  warmup: LaunchShape[] | null = null;
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
  /**
   * The error queue: what `launch`, `write` and `replay` could not do, raised
   * by the next draining call. While a graph records, its `sink` also keeps
   * every error queued, so `endCapture` fails even when a drain reported them.
   */
  readonly errors: ErrorQueue;
  /** Encodes launches and graph replays into the open pass (the launch and replay paths call it directly). */
  readonly dispatch: DispatchPaths;
  #ctx: DeviceContext;
  /** Resolves a binding's slice through the stream that owns it. */
  readonly resolveOwner: OwnerResolver;
  #reader: StreamReader;
  #writer: StreamWriter;
  #arena: InfoArena;
  #indirects: IndirectCounts;
  #held: HeldWork;
  #bindings: BindingResolver;
  #pinsPending: ManagedMemory[] = [];

  /**
   * Creates the instance.
   *
   * @param parts Slot, shared context, memory and the owner resolver.
   */
  constructor(parts: {
    slot: number;
    ctx: DeviceContext;
    memory: MemoryManager;
    counts: CountPool;
    storage: WebGpuStorage;
    resolveOwner: OwnerResolver;
  }) {
    this.slot = parts.slot;
    this.label = `stream ${parts.slot}`;
    this.#ctx = parts.ctx;
    this.memory = parts.memory;
    this.counts = parts.counts;
    this.storage = parts.storage;
    this.resolveOwner = parts.resolveOwner;
    const s = parts.ctx.settings;
    this.systemProfiler = new SystemProfiler(parts.slot);
    this.#arena = new InfoArena(parts.ctx.device, {
      capacity: Math.max(64 * 1024, Math.min(s.tasksMax, 1024) * s.infoOffsetAlignment),
      alignment: s.infoOffsetAlignment,
      maxCapacity: s.maxBufferSize,
      label: `${this.label} info arena`,
    });
    this.staging = new ReadbackPool(parts.ctx.device, {
      label: this.label,
      maxBufferSize: s.maxBufferSize,
      fastReads: parts.ctx.fastReads,
    });
    if (parts.ctx.fastReads.active) this.stockStaging();
    this.#reader = new StreamReader(this, parts.ctx);
    this.queue = new CommandQueue(parts.ctx, this, this.#arena);
    const ctx = parts.ctx;
    const errors = this.errors = new ErrorQueue({
      slot: parts.slot,
      onDrain: (drained) => {
        this.profiler?.fail(drained);
        this.systemProfiler.fail(drained);
        this.onDrain?.(drained);
      },
    });
    const pins = this.#pinsPending;
    const dyn = new Uint32Array(1);
    const bindings = this.#bindings = new BindingResolver({ stream: this, ctx, errors, pins });
    const indirects = this.#indirects = new IndirectCounts({ stream: this, ctx, bindings, slots: this.queue.counts });
    const held = this.#held = new HeldWork({
      stream: this,
      ctx,
      errors,
      pins,
      dyn,
    });
    this.#writer = new StreamWriter({ stream: this, ctx, held });
    this.dispatch = new DispatchEncoder({
      stream: this,
      ctx,
      arena: this.#arena,
      held,
      bindings,
      indirects,
      dyn,
      pins,
    });
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
   * Submits first when a profile's query set has no room for the next timed
   * pass. A dispatch calls it before it marks its pages or takes its pins: the
   * submit would otherwise hand them to the batch before the dispatch's own.
   *
   * @returns True when it submitted.
   */
  roomForTimedPass(): boolean {
    if (!this.timestamping || this.profiler === null || !this.profiler.full) return false;
    this.submit();
    return true;
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

  /** Ends the open pass, if any (before copies, resolves, or a profile boundary). */
  endPass(): void {
    this.queue.endPass();
  }

  /**
   * Submits everything encoded (releasing held work first, with isolation
   * when validations are still pending), then records the submission: its
   * index for cross-stream pins, the new epoch, the memory manager's periodic
   * cleanup and deferred buffer destruction.
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
    // CubeCL's wgpu stream runs the periodic cleanup after every submit (a no-op while a capture is armed).
    this.memory.cleanup(false);
    this.storage.flush();
    if (ctx.logger.launches) {
      ctx.logger.log("stream", `${this.label}: submit #${ctx.submitIndex} (${n} command buffers)`);
    }
    this.profiler?.submitted();
    q.prepareNext();
  }

  /**
   * Copies ranges into staging buffers and resolves with their bytes after one
   * completion wait shared by every read requested in the same tick (or, with
   * `into`, copies them there and resolves with none).
   */
  read(
    items: readonly { slice: Slice; offset: number; size: number }[],
    into: readonly Uint8Array[] | null = null,
  ): Promise<Uint8Array<ArrayBuffer>[]> {
    this.#ctx.current = this;
    return this.#reader.read(items, into);
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
    // With fast reads, the early map of a small staging buffer is the wait (no 10 ms sleep after the device is done).
    await (this.#ctx.fastReads.active ? this.staging.waitIdle() : this.#ctx.queue.onSubmittedWorkDone());
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
    await this.errors.settle();
    this.errors.throwIfAny();
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
