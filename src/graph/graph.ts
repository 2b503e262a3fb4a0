/**
 * Software graphs: launches recorded fully resolved while a stream records,
 * and the replayable graph built from them (CubeCL's wgpu graph).
 *
 * WebGPU has no replayable command buffers (`submit` consumes them), so a
 * graph keeps pipelines and prebuilt bind groups and re-encodes them on
 * replay: O(n) in recorded dispatches, but no pipeline lookup, binding
 * resolution, info upload or bind group creation.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import type { GraphId } from "../ids.ts";
import type { ServerError } from "../errors.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { ManagedMemory, Page } from "../contract/managed_memory.ts";
import { formatBytesExact } from "../_util/format.ts";
import { type CopySource, type CountCopier, type CountCopy, countSlotStride } from "../kernel/count_copy.ts";
import { planCountCopies } from "./count_plan.ts";

/** One launch captured while recording. */
export interface RecordedDispatch {
  /** The compiled pipeline. */
  readonly entry: PipelineEntry;
  /** Buffers of the storage bindings. */
  readonly buffers: readonly GPUBuffer[];
  /** Byte offsets of the bindings. */
  readonly offsets: readonly number[];
  /** Byte sizes of the bindings. */
  readonly sizes: readonly number[];
  /** Pages used, for ordering against other streams at replay. */
  readonly pages: readonly Page[];
  /** A copy of the info words, or null. */
  readonly info: Uint32Array | null;
  /** Static workgroup counts. */
  readonly x: number;
  /** Static workgroup counts. */
  readonly y: number;
  /** Static workgroup counts. */
  readonly z: number;
  /** Indirect count source, read at replay time, or null. */
  readonly indirect: { buffer: GPUBuffer; offset: number; page: Page; copy: boolean } | null;
}

/** What a launch was, as far as a graph's replays depend on it: its kernel, count, and the number of its bindings and info words. */
export interface LaunchShape {
  /** The kernel's id. */
  readonly kernel: string;
  /** Its name, for messages. */
  readonly name: string;
  /** Static counts, or null for an indirect count. */
  readonly count: readonly [number, number, number] | null;
  /** Storage bindings. */
  readonly buffers: number;
  /** Info words (0 for none). */
  readonly infoWords: number;
}

/** A shape, as a message writes it. */
function shapeText(s: LaunchShape | undefined): string {
  if (s === undefined) return "nothing";
  const count = s.count === null ? "an indirect count" : `[${s.count.join(", ")}]`;
  return `${s.name} ${count} with ${s.buffers} buffer(s)${s.infoWords > 0 ? ` and ${s.infoWords} info words` : ""}`;
}

/**
 * The first launch where two runs of a capture's function differ, described,
 * or null when they launched the same kernels with the same counts and
 * argument counts in the same order.
 *
 * @param warmup The warm-up run's launches.
 * @param recorded The recorded run's launches.
 * @returns The difference, or null.
 */
export function firstDifference(warmup: readonly LaunchShape[], recorded: readonly LaunchShape[]): string | null {
  const n = Math.max(warmup.length, recorded.length);
  for (let i = 0; i < n; i++) {
    const a = warmup[i];
    const b = recorded[i];
    const same = a !== undefined && b !== undefined && a.kernel === b.kernel && a.buffers === b.buffers &&
      a.infoWords === b.infoWords &&
      (a.count === null ? b.count === null : b.count !== null && a.count.join() === b.count.join());
    if (!same) {
      return `launch ${i + 1} differs: the warm-up ran ${shapeText(a)}, the recorded run ${
        shapeText(b)
      } (the warm-up made ${warmup.length} launch(es), the recorded run ${recorded.length})`;
    }
  }
  return null;
}

/** What a recording collects. */
export class GraphRecorder {
  /** Captured launches, in order. */
  readonly dispatches: RecordedDispatch[] = [];
  /**
   * Memory pinned for the graph's lifetime: every binding and indirect count
   * it recorded (CubeCL pins every buffer a graph records until
   * `graphDestroy`), so a handle released after the capture does not hand
   * its slice to another handle while replays still use it.
   */
  readonly pins: ManagedMemory[] = [];
  #pinned = new Set<ManagedMemory>();
  /**
   * Every error queued on the stream while recording (a refused write or
   * replay, a stale binding, a launch refused for a device limit, a kernel
   * that failed to compile): `endCapture` fails with them even when a drain
   * inside the window has already reported them.
   */
  readonly windowErrors: ServerError[] = [];
  /** Launches a dry run skipped while recording (they are missing, so `endCapture` fails). */
  dryRunSkips = 0;
  /** The warm-up's launches (those made between `graphPrepare` and `beginCapture`). */
  warmup: LaunchShape[] = [];

  /** The recorded launches' shapes. */
  get shapes(): LaunchShape[] {
    return this.dispatches.map((d) => ({
      kernel: d.entry.kernel.id,
      name: d.entry.kernel.name,
      count: d.indirect === null ? [d.x, d.y, d.z] as const : null,
      buffers: d.buffers.length,
      infoWords: d.info?.length ?? 0,
    }));
  }

  /**
   * Pins `memory` for the graph's lifetime, once however many dispatches use it.
   *
   * @param memory The memory a recorded dispatch binds or reads its counts from.
   */
  pin(memory: ManagedMemory): void {
    if (this.#pinned.has(memory)) return;
    this.#pinned.add(memory);
    memory.pin();
    this.pins.push(memory);
  }
}

/** One dispatch of a graph, ready to encode. */
export interface ReplayTask {
  /** Debug name (the kernel's). */
  readonly name: string;
  /** The pipeline. */
  readonly pipeline: GPUComputePipeline;
  /** The prebuilt bind group. */
  readonly bindGroup: GPUBindGroup;
  /** Dynamic offset of the info words, or null without info. */
  readonly dynamic: Uint32Array | null;
  /** Static counts. */
  readonly x: number;
  /** Static counts. */
  readonly y: number;
  /** Static counts. */
  readonly z: number;
  /** Indirect source (with the copy that fills it first, if any), or null. */
  readonly indirect: IndirectSource | null;
  /**
   * The pipeline must be set: it differs from the previous task's, or this
   * task copies its count first (always true for the first).
   */
  readonly pipelineChanges: boolean;
  /**
   * The bind group must be set although no dynamic offset asks for it: the
   * pipeline changes, or the previous task bound another group or bound with
   * a dynamic offset, or this task copies its count first (always true for
   * the first).
   */
  readonly rebinds: boolean;
}

/** A captured graph held by a server (the client holds a `Graph` naming it). */
export class CapturedGraph {
  /** Process-unique id. */
  readonly id: GraphId;
  /** Stream slot it was captured on (and replays on). */
  readonly slot: number;
  /** Dispatches in order. */
  readonly tasks: readonly ReplayTask[];
  /** Distinct pages the dispatches use. */
  readonly pages: readonly Page[];
  /** Dispatches that copy their indirect count first (in the pass, one command each). */
  readonly countCopies: number;
  /** True once destroyed. */
  released = false;
  #retained: ManagedMemory[];
  #pins: ManagedMemory[];
  #owned: GPUBuffer[];

  /**
   * Creates the graph.
   *
   * @param parts Id, slot, tasks, pages, retained memory, pins and owned buffers.
   */
  constructor(parts: {
    id: GraphId;
    slot: number;
    tasks: ReplayTask[];
    pages: Page[];
    retained: ManagedMemory[];
    pins: ManagedMemory[];
    owned: GPUBuffer[];
  }) {
    this.id = parts.id;
    this.slot = parts.slot;
    this.tasks = parts.tasks;
    this.pages = parts.pages;
    this.countCopies = parts.tasks.filter((t) => t.indirect !== null && t.indirect.copy !== null).length;
    this.#retained = parts.retained;
    this.#pins = parts.pins;
    this.#owned = parts.owned;
  }

  /** Releases retained memory and pins, and destroys the graph's own buffers (after a submit). */
  release(): void {
    this.released = true;
    for (const m of this.#retained) m.drop();
    for (const m of this.#pins) m.unpin();
    for (const b of this.#owned) b.destroy();
    this.#retained = [];
    this.#pins = [];
    this.#owned = [];
  }
}

/**
 * Builds a graph from a recording: info words go to one buffer of the graph,
 * bind groups are created once, indirect counts that share a page with a
 * bound buffer are copied, in the pass, into a slot of the graph's own
 * indirect buffer right before the first dispatch that reads them and again
 * after any dispatch that may have written them (`planCountCopies`), so a
 * replay reads the counts current then.
 *
 * @param device The device.
 * @param parts Id, slot, recording, retained memory, the dynamic-offset
 * alignment and the device's count copier.
 * @returns The graph.
 */
export function buildGraph(
  device: GPUDevice,
  parts: {
    id: GraphId;
    slot: number;
    recorder: GraphRecorder;
    retained: ManagedMemory[];
    alignment: number;
    copier: CountCopier;
  },
): CapturedGraph {
  const { recorder, alignment, copier } = parts;
  const label = `graph ${parts.id}`;
  const owned: GPUBuffer[] = [];
  let infoBytes = 0;
  const infoAt: number[] = [];
  for (const d of recorder.dispatches) {
    infoAt.push(d.info === null ? -1 : infoBytes);
    if (d.info !== null) infoBytes = alignUp(infoBytes + d.info.byteLength, alignment);
  }
  let infoBuffer: GPUBuffer | null = null;
  if (infoBytes > 0) {
    infoBuffer = device.createBuffer({
      label: `${label} info (${formatBytesExact(infoBytes)})`,
      size: infoBytes,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    owned.push(infoBuffer);
    const host = new Uint32Array(infoBytes / 4);
    recorder.dispatches.forEach((d, i) => d.info && host.set(d.info, infoAt[i]! / 4));
    device.queue.writeBuffer(infoBuffer, 0, host);
  }
  // A slot per distinct copied count, copied only where it may be stale (`planCountCopies`).
  const plan = planCountCopies(recorder.dispatches);
  const stride = countSlotStride(copier.alignment);
  let indirectBuffer: GPUBuffer | null = null;
  if (plan.slots > 0) {
    indirectBuffer = device.createBuffer({
      label: `${label} indirect counts (${plan.slots})`,
      size: (plan.slots - 1) * stride + 16,
      usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.STORAGE,
    });
    owned.push(indirectBuffer);
  }
  const copySources = new Map<GPUBuffer, CopySource>();
  const pages = new Set<Page>();
  // Identical bindings share one bind group: the driver does less work when a
  // pass sees the same bind group again.
  const bindGroups = new Map<string, GPUBindGroup>();
  const ids = new Map<GPUBuffer, number>();
  const idOf = (b: GPUBuffer): number => {
    let id = ids.get(b);
    if (id === undefined) ids.set(b, id = ids.size);
    return id;
  };
  let previousBindGroup: GPUBindGroup | null = null;
  const tasks = recorder.dispatches.map((d, i): ReplayTask => {
    for (const p of d.pages) pages.add(p);
    const key = `${d.entry.layoutId}|${d.buffers.map((b, k) => `${idOf(b)}:${d.offsets[k]}:${d.sizes[k]}`).join(",")}|${
      d.info?.byteLength ?? -1
    }`;
    let bindGroup = bindGroups.get(key);
    if (bindGroup === undefined) {
      const entries: GPUBindGroupEntry[] = d.buffers.map((buffer, b) => ({
        binding: b,
        resource: { buffer, offset: d.offsets[b]!, size: d.sizes[b]! },
      }));
      if (d.info !== null) {
        entries.push({
          binding: d.buffers.length,
          resource: { buffer: infoBuffer!, offset: 0, size: d.info.byteLength },
        });
      }
      bindGroup = device.createBindGroup({
        label: `${label} bind group ${bindGroups.size} (first used by dispatch ${i}, ${d.entry.kernel.name})`,
        layout: d.entry.layout,
        entries,
      });
      bindGroups.set(key, bindGroup);
    }
    let indirect: ReplayTask["indirect"] = null;
    if (d.indirect !== null) {
      pages.add(d.indirect.page);
      // A count in a page of the bindings is read from its slot of the graph's buffer; others in place.
      const step = plan.steps[i]!;
      const buffer = step === null ? d.indirect.buffer : indirectBuffer!;
      const offset = step === null ? d.indirect.offset : step.slot * stride;
      let copy: CountCopy | null = null;
      if (step?.copy) {
        const src = d.indirect.buffer;
        let source = copySources.get(src);
        if (source === undefined) {
          source = copier.bind(src, indirectBuffer!, `${label} count copy ${copySources.size} (${src.label})`);
          copySources.set(src, source);
        }
        const c = { pipeline: null! as GPUComputePipeline, bindGroup: source.bindGroup, offsets: new Uint32Array(2) };
        copier.place(c, source, d.indirect.offset);
        c.offsets[1] = offset;
        copy = c;
      }
      indirect = { buffer, offset, copy, kept: false, countId: -1, countAt: 0, spares: 0 };
    }
    const copies = indirect !== null && indirect.copy !== null;
    const previous = i === 0 ? null : recorder.dispatches[i - 1]!;
    const pipelineChanges = previous === null || previous.entry.pipeline !== d.entry.pipeline || copies;
    const rebinds = pipelineChanges || previous!.info !== null || previousBindGroup !== bindGroup;
    previousBindGroup = bindGroup;
    return {
      name: d.entry.kernel.name,
      pipeline: d.entry.pipeline,
      pipelineChanges,
      rebinds,
      bindGroup,
      dynamic: d.info === null ? null : new Uint32Array([infoAt[i]!]),
      x: d.x,
      y: d.y,
      z: d.z,
      indirect,
    };
  });
  return new CapturedGraph({
    id: parts.id,
    slot: parts.slot,
    tasks,
    pages: [...pages],
    retained: parts.retained,
    pins: recorder.pins,
    owned,
  });
}

/** Where an indirect dispatch reads its three u32 workgroup counts. */
export interface IndirectSource {
  /** The buffer holding the counts. */
  readonly buffer: GPUBuffer;
  /** Byte offset of the counts. */
  readonly offset: number;
  /** The copy that fills `buffer` from the count's own page, encoded in the pass right before the dispatch, or null. */
  readonly copy: CountCopy | null;
  /**
   * With a copy: none of the dispatch's bindings covers the count's bytes, so
   * the dispatch cannot change them, and a later dispatch of the same pass
   * from the same count may find it already copied (no copy).
   */
  readonly kept: boolean;
  /**
   * The storage id of the count's own buffer when its copy goes to one of the
   * stream's count slots (`CountSlots`; `buffer` is then the stream's indirect
   * count buffer and the slot, not `offset`, says where the dispatch reads);
   * -1 when the copy, if any, has a fixed destination (graphs).
   */
  readonly countId: number;
  /** With `countId`: the count's byte offset in its own buffer. */
  readonly countAt: number;
  /** With `countId`: the stream's valid count slots whose counts the dispatch leaves unchanged (a bit each). */
  readonly spares: number;
}
