/**
 * A stream's dispatch encoding: launches and graph replays into the stream's
 * open compute pass.
 *
 * The launch path, in steady state: the pipeline's memo of its last launch
 * (same handles, same slices) gives the bind group without a cache lookup,
 * info words are appended to the arena, then `setPipeline` (only when it
 * changes), `setBindGroup` and `dispatchWorkgroups` go into the already open
 * pass. Every `tasksMax` dispatches the stream submits. Launches of pipelines
 * still being validated, and everything after them, are held (`HeldWork`).
 *
 * @module
 */

import { bindingSizeError } from "../errors/_binding_size.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { CountCopy } from "../kernel/count_copy.ts";
import type { ManagedMemory, Page, Slice } from "../contract/managed_memory.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { CapturedGraph } from "../graph/graph.ts";
import { recordLaunch } from "./record_launch.ts";
import type { DeviceContext } from "./device_context.ts";
import type { InfoArena } from "./info_arena.ts";
import type { HeldWork } from "./held_work.ts";
import type { BindingResolver } from "./binding_resolver.ts";
import type { IndirectCounts } from "./indirect_counts.ts";
import { encodeReplay } from "./graph_replay.ts";
import type { EncoderHost } from "./_stream_parts.ts";
import type { InfoWords } from "../contract/types.ts";
import type { IndirectSource } from "../graph/graph.ts";

/** The info arena grows (doubling) when it fills before `tasksMax` launches, up to this many bytes. */
const ARENA_GROWTH_MAX = 16 * 1024 * 1024;

/** The resolved bindings of a pipeline's last launch (see `DispatchEncoder.launch`). */
interface LaunchMemo {
  stream: EncoderHost;
  bindings: BufferBinding[];
  slices: Slice[];
  bindGroup: GPUBindGroup;
  infoBytes: number;
  arenaId: number;
}

/** A stream's launch and replay paths, as its callers see them (implemented by `DispatchEncoder`). */
export interface DispatchPaths {
  /**
   * Encodes one dispatch, records it while the stream is capturing, or holds
   * it while validations are pending. A stale binding queues a `LaunchError`
   * and encodes nothing.
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
  ): void;
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
  ): void;
  /**
   * Appends info words to the arena, submitting first when it is full.
   *
   * @param info The words.
   * @returns Their byte offset in the arena.
   */
  pushInfo(info: InfoWords): number;
  /**
   * Marks pages used by the batch being encoded.
   *
   * @param pages The pages.
   */
  markPages(pages: readonly Page[]): void;
  /**
   * Re-encodes a graph's dispatches into the open pass.
   *
   * @param graph The graph, captured on this stream.
   */
  replay(graph: CapturedGraph): void;
}

/** What a stream's dispatch encoder works with: the stream and its encoding internals. */
export interface DispatchEncoderParts {
  /** The stream. */
  readonly stream: EncoderHost;
  /** The device context. */
  readonly ctx: DeviceContext;
  /** The stream's info arena. */
  readonly arena: InfoArena;
  /** The stream's held work. */
  readonly held: HeldWork;
  /** The stream's binding resolver. */
  readonly bindings: BindingResolver;
  /** The stream's indirect count sources. */
  readonly indirects: IndirectCounts;
  /** The stream's one-word dynamic offset array. */
  readonly dyn: Uint32Array;
  /** The stream's pins waiting for its next submission (a held launch takes its own back). */
  readonly pins: ManagedMemory[];
}

/** Encodes one stream's launches and replays. */
export class DispatchEncoder implements DispatchPaths {
  #stream: EncoderHost;
  #ctx: DeviceContext;
  #arena: InfoArena;
  #held: HeldWork;
  #bindings: BindingResolver;
  #indirects: IndirectCounts;
  #dyn: Uint32Array;
  #pins: ManagedMemory[];
  #tasksMax: number;

  /**
   * Creates the instance.
   *
   * @param parts The stream and the internals it shares with its encoder.
   */
  constructor(parts: DispatchEncoderParts) {
    this.#stream = parts.stream;
    this.#ctx = parts.ctx;
    this.#arena = parts.arena;
    this.#held = parts.held;
    this.#bindings = parts.bindings;
    this.#indirects = parts.indirects;
    this.#dyn = parts.dyn;
    this.#pins = parts.pins;
    this.#tasksMax = parts.ctx.settings.tasksMax;
  }

  /** See `DispatchPaths.launch`. */
  launch(
    entry: PipelineEntry,
    bindings: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
  ): void {
    const stream = this.#stream;
    this.#ctx.current = stream;
    if (stream.recorder !== null) {
      if (info !== null && this.#infoTooLarge(entry, info)) return;
      recordLaunch(stream, stream.recorder, { entry, bindings, info, x, y, z, indirect }, this.#bindings);
      return;
    }
    if (info !== null && info.length * 4 > this.#arena.capacity) {
      if (this.#infoTooLarge(entry, info)) return;
      stream.submit(); // grow the arena only when nothing queued or held can refer to it
      const old = this.#arena.id;
      if (this.#arena.ensure(info.length * 4)) this.#ctx.bindGroups.evictStorage(old);
    }
    // Held launches keep their own copy of the info words; they enter the arena when encoded.
    const hold = this.#held.current !== null || entry.state !== "valid";
    if (!hold && stream.timestamping) stream.roomForTimedPass(); // before any page is marked
    const pinMark = this.#pins.length; // pins taken from here on are this launch's
    let offset = -1;
    if (info !== null && !hold) offset = this.pushInfo(info);
    const n = entry.buffers;
    const infoBytes = info === null ? 0 : info.length * 4;
    const arenaId = info === null ? 0 : this.#arena.id;
    let bindGroup: GPUBindGroup | null = null;
    // Fast path: the same handles as this pipeline's last launch on this stream,
    // still owning the same slices: reuse the bind group, only track page use.
    const memo = entry.memo as LaunchMemo | null;
    let bound: Slice[] | null = null; // the bindings' slices, when the memo gave them
    if (memo !== null && memo.stream === stream && memo.infoBytes === infoBytes && memo.arenaId === arenaId) {
      const mb = memo.bindings;
      const ms = memo.slices;
      let i = 0;
      while (i < n && bindings[i] === mb[i] && bindings[i]!.memory.slice === ms[i]) i++;
      if (i === n) {
        const epoch = stream.epoch;
        for (i = 0; i < n; i++) {
          const page = ms[i]!.page;
          if (page.useStream !== stream || page.useEpoch !== epoch) stream.usePage(page);
        }
        bindGroup = memo.bindGroup;
        bound = ms;
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
        if (m === null) entry.memo = m = { stream, bindings: [], slices: [], bindGroup, infoBytes, arenaId };
        for (let i = 0; i < n; i++) {
          m.bindings[i] = bindings[i]!;
          m.slices[i] = bindings[i]!.memory.slice!;
        }
        m.stream = stream;
        m.bindGroup = bindGroup;
        m.infoBytes = infoBytes;
        m.arenaId = arenaId;
      }
    }
    let source: (IndirectSource & { page: Page }) | null = null;
    if (indirect !== null) {
      source = this.#indirects.source(indirect, bindings, n, entry.kernel.name, bound, bindGroup);
      if (source === null) return;
    }
    if (hold) {
      const pages: Page[] = [];
      for (let i = 0; i < n; i++) pages.push(bindings[i]!.memory.slice!.page);
      // The count page too: a write into the counts must wait for this dispatch.
      if (source !== null) {
        pages.push(source.page);
        const c = source.copy; // the scratch is reused: keep a copy
        const copy = c === null ? null : { pipeline: c.pipeline, bindGroup: c.bindGroup, offsets: c.offsets.slice() };
        // Which slots it spares is known only when it is encoded: it spares none.
        source = { ...source, copy, spares: 0 };
      }
      const words = info === null
        ? null
        : new Uint32Array(info.buffer.slice(info.byteOffset, info.byteOffset + info.byteLength));
      // Its cross-stream pins go with it: a submit before it is encoded must not take them.
      const pins = this.#pins.length > pinMark ? this.#pins.splice(pinMark) : null;
      this.#held.hold({ kind: "launch", entry, bindGroup, pages, info: words, x, y, z, indirect: source, pins });
      return;
    }
    let dynamic: Uint32Array | null = null;
    if (info !== null) (dynamic = this.#dyn)[0] = offset;
    this.encodeDispatch(entry.pipeline, bindGroup, dynamic, x, y, z, source, entry.kernel.name);
  }

  /**
   * Queues a `ResourceLimitError` (`binding-size`) on the stream when info
   * words exceed `maxStorageBufferBindingSize`: WebGPU would refuse their bind
   * group and fail the whole batch. Called only off the steady launch path
   * (while recording, or when the info does not fit the arena).
   *
   * @param entry The launch's pipeline.
   * @param info Its info words.
   * @returns True when the launch is refused.
   */
  #infoTooLarge(entry: PipelineEntry, info: InfoWords): boolean {
    const max = this.#ctx.settings.maxBindingSize;
    const bytes = info.length * 4;
    if (bytes <= max) return false;
    this.#stream.errors.push(bindingSizeError(entry.kernel.name, "info", bytes, max));
    return true;
  }

  /** See `DispatchPaths.encodeDispatch`. */
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
    const stream = this.#stream;
    const q = stream.queue;
    // The count slots (`CountSlots`) live on the host: their table is updated before the dispatch is encoded.
    let at = 0;
    if (indirect === null) q.counts.valid = 0; // it may write any count the slots hold
    else if (indirect.countId >= 0) {
      // Copied to the stream's slots, unless its slot holds it already. (Written out here, not in a method: with
      // one more call in it, V8 inlines this method into `launch` and leaves the arena's push out.)
      const slots = q.counts;
      let k = slots.find(indirect.countId, indirect.countAt);
      if (k >= 0) slots.placed = k;
      else {
        k = slots.claim();
        indirect.copy!.offsets[1] = k * slots.stride;
        this.#encodeCopy(indirect.copy!);
      }
      slots.after(indirect.countId, indirect.countAt, indirect.kept, indirect.spares);
      at = k * slots.stride;
    } else {
      q.counts.valid = 0; // read in place, or a graph's count: it may write any count the slots hold
      if (indirect.copy !== null) this.#encodeCopy(indirect.copy);
      at = indirect.offset;
    }
    const pass = q.pass ?? q.openPass();
    q.setPipeline(pass, pipeline);
    q.setBindGroup(pass, bindGroup, dynamic);
    if (indirect !== null) pass.dispatchWorkgroupsIndirect(indirect.buffer, at);
    else pass.dispatchWorkgroups(x, y, z);
    q.commands++;
    if (stream.timestamping) {
      // While profiling, each dispatch has its own pass: name it and close it.
      stream.profiler!.noteDispatch(name);
      q.endPass();
    }
    if (++q.tasks >= this.#tasksMax) stream.submit();
  }

  /** Encodes a count copy into the open pass, or into an untimed pass of its own while profiling. */
  #encodeCopy(copy: CountCopy): void {
    const stream = this.#stream;
    const q = stream.queue;
    if (!stream.timestamping) q.copyCount(q.pass ?? q.openPass(), copy);
    else {
      q.copyCount(q.pass ?? q.openPass(false), copy);
      q.endPass();
    }
  }

  /** See `DispatchPaths.pushInfo`. */
  pushInfo(info: InfoWords): number {
    let offset = this.#arena.push(info);
    if (offset < 0) {
      // The arena, not the batch, is full: submit, and grow it so that batches of such launches fill up to
      // tasksMax and no longer submit early (bench/scaling.ts). A submit releases held work first, so nothing
      // queued or held refers to the arena then, except while held work is being encoded: its remaining
      // launches keep bind groups of this arena, so it is kept until a later submit.
      const early = this.#stream.queue.tasks < this.#tasksMax;
      this.#stream.submit();
      if (early && !this.#held.releasing) this.#growArena();
      offset = this.#arena.push(info);
    }
    return offset;
  }

  /** Doubles the info arena, up to `ARENA_GROWTH_MAX` bytes (a launch needing more still gets it on its own). */
  #growArena(): void {
    const arena = this.#arena;
    if (arena.capacity >= ARENA_GROWTH_MAX) return;
    const old = arena.id;
    if (arena.ensure(Math.min(arena.capacity * 2, ARENA_GROWTH_MAX))) this.#ctx.bindGroups.evictStorage(old);
  }

  /** See `DispatchPaths.markPages` (held work re-marks its pages when released). */
  markPages(pages: readonly Page[]): void {
    const stream = this.#stream;
    const epoch = stream.epoch;
    for (const page of pages) if (page.useStream !== stream || page.useEpoch !== epoch) stream.usePage(page);
  }

  /** See `DispatchPaths.replay`; submits every `tasksMax` dispatches like launches do. */
  replay(graph: CapturedGraph): void {
    const stream = this.#stream;
    this.#ctx.current = stream;
    const q = stream.queue;
    const n = graph.tasks.length;
    // The common case in one tight loop: nothing held, no segment, no profile, and room in the batch.
    if (this.#held.current === null && q.segment === null && !stream.timestamping && q.tasks + n < this.#tasksMax) {
      this.markPages(graph.pages);
      encodeReplay(q, graph.tasks, q.pass ?? q.openPass());
      q.counts.valid = 0; // its dispatches may write any count the slots hold
      q.commands += n + graph.countCopies;
      q.tasks += n;
      q.replays++;
      return;
    }
    if (this.#held.current !== null) this.#held.releaseNow();
    if (q.segment !== null) q.switchSegment(null);
    this.markPages(graph.pages);
    for (const t of graph.tasks) {
      if (stream.roomForTimedPass()) this.markPages(graph.pages); // it submitted: the pages belong to the next batch
      this.encodeDispatch(t.pipeline, t.bindGroup, t.dynamic, t.x, t.y, t.z, t.indirect, t.name);
      if (q.tasks === 0) this.markPages(graph.pages); // it submitted: the next batch uses the pages too
    }
  }
}
