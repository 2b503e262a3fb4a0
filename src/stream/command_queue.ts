/**
 * A stream's command encoder, open compute pass and submission queue: the
 * finished command buffers waiting to be submitted to the device's queue.
 *
 * Command buffers are tagged with the pipeline whose validation was still
 * pending when they were recorded (a "segment"); at submit, untagged and
 * validated ones go in one `queue.submit`, a pending one is submitted alone
 * (so a kernel that fails to compile cannot invalidate other work), and one
 * whose pipeline failed is dropped (its compile error is already queued).
 * Every submit runs inside a validation error scope whose result is queued on
 * the stream.
 *
 * With the `openPassAhead` setting (the default on hardware adapters), the
 * next encoder and pass are opened right after each submit, so the next
 * launch pays neither; otherwise the first command after a submit opens them.
 *
 * @module
 */

import { DeviceValidationError, LaunchError, type ServerError } from "../errors.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import { type CountCopy, encodeCountCopy } from "../kernel/count_copy.ts";
import type { DeviceContext } from "./device_context.ts";
import type { InfoArena } from "./info_arena.ts";
import { CountSlots } from "./count_slots.ts";

/** What the queue needs from its stream. */
export interface QueueHost {
  /** Label prefix, e.g. `"stream 0"`. */
  readonly label: string;
  /** The stream's error queue (asynchronous errors go there; their checks are tracked there). */
  readonly errors: { push(error: ServerError): void; track(p: Promise<unknown>): void };
  /** Timestamp writes for the next pass, or null when passes are not timed. */
  timedPass(label: string): GPUComputePassDescriptor | null;
  /** True while every pass must be timed (no pass is opened ahead of time). */
  readonly timestamping: boolean;
}

/** What a command buffer holds, for the error that says which work did not run. */
interface BatchContents {
  /** Commands encoded (dispatches and copies). */
  readonly commands: number;
  /** The pipelines set, in order (repeats included; at most `BATCH_PIPELINES_KEPT`). */
  readonly pipelines: readonly GPUComputePipeline[];
  /** Graph replays encoded. */
  readonly replays: number;
}

interface Finished {
  cb: GPUCommandBuffer;
  entry: PipelineEntry | null;
  contents: BatchContents;
}

/** Pipelines a batch remembers for its error message. */
const BATCH_PIPELINES_KEPT = 64;

/** The kernels of a batch, from its pipelines' labels (`kernel <name> (...)`), each once. */
function kernelsOf(contents: BatchContents): string {
  const names = new Set<string>();
  for (const p of contents.pipelines) names.add(/^kernel (.*?)(?: \(|$)/.exec(p.label)?.[1] ?? p.label);
  const list = [...names].join(", ");
  return contents.replays > 0 ? `${list}${list ? "; " : ""}${contents.replays} graph replays` : list;
}

/** Encoder, pass and submission queue of one stream. */
export class CommandQueue {
  /** The open compute pass, or null. */
  pass: GPUComputePassEncoder | null = null;
  /** Pipeline last set on the open pass. */
  lastPipeline: GPUComputePipeline | null = null;
  /** Bind group last set at group 0 of the open pass, under `lastPipeline`. */
  lastBindGroup: GPUBindGroup | null = null;
  /** The dynamic offset `lastBindGroup` was set with, or -1 when it has none. */
  lastOffset = -1;
  /** The counts the stream's indirect count buffer still holds for the open pass. */
  readonly counts: CountSlots;
  /** Commands encoded in the current encoder. */
  commands = 0;
  /** Dispatches encoded since the last submit. */
  tasks = 0;
  /** Graph replays encoded in the current encoder. */
  replays = 0;
  /** Pipelines set in the current encoder (for the error of a batch that fails). */
  #pipelines: GPUComputePipeline[] = [];
  #ctx: DeviceContext;
  #host: QueueHost;
  #arena: InfoArena;
  #encoder: GPUCommandEncoder | null = null;
  #encoderNo = 0;
  #segment: PipelineEntry | null = null;
  #finished: Finished[] = [];
  #passDescriptor: GPUComputePassDescriptor;

  /**
   * Creates the queue.
   *
   * @param ctx The device context.
   * @param host The owning stream.
   * @param arena The stream's info arena, uploaded at each submit.
   */
  constructor(ctx: DeviceContext, host: QueueHost, arena: InfoArena) {
    this.#ctx = ctx;
    this.#host = host;
    this.#arena = arena;
    this.#passDescriptor = { label: `${host.label} pass` };
    this.counts = new CountSlots(ctx.settings.storageOffsetAlignment);
  }

  /** True when commands are encoded or finished and not yet submitted. */
  get hasWork(): boolean {
    return this.commands > 0 || this.#finished.length > 0;
  }

  /** The pending pipeline whose segment is being recorded, or null. */
  get segment(): PipelineEntry | null {
    return this.#segment;
  }

  #encoderNow(): GPUCommandEncoder {
    if (this.#encoder === null) {
      this.#encoderNo++;
      this.#encoder = this.#ctx.device.createCommandEncoder({
        label: `${this.#host.label} encoder #${this.#encoderNo}`,
      });
    }
    return this.#encoder;
  }

  /**
   * Opens a compute pass (timed when the stream is profiling, unless `timed` is false).
   *
   * @param timed False for a pass the profiler does not time (a count copy's while profiling).
   * @returns The pass.
   */
  openPass(timed = true): GPUComputePassEncoder {
    const descriptor = (timed ? this.#host.timedPass(this.#passDescriptor.label!) : null) ?? this.#passDescriptor;
    this.pass = this.#encoderNow().beginComputePass(descriptor);
    this.lastPipeline = null;
    this.lastBindGroup = null;
    this.counts.valid = 0;
    this.#ctx.passesBegun++;
    return this.pass;
  }

  /**
   * Encodes an indirect count's copy into `pass` (the open pass), counted as
   * a command, not a dispatch; the pass state it leaves makes the next
   * `setPipeline` and `setBindGroup` set theirs.
   *
   * @param pass The open pass.
   * @param copy The copy.
   */
  copyCount(pass: GPUComputePassEncoder, copy: CountCopy): void {
    encodeCountCopy(pass, copy);
    this.lastPipeline = copy.pipeline;
    this.lastBindGroup = null;
    this.commands++;
  }

  /**
   * Sets `pipeline` on `pass` (the open pass) unless it is set already; a
   * change also forgets the bound group.
   *
   * @param pass The open pass.
   * @param pipeline The pipeline.
   */
  setPipeline(pass: GPUComputePassEncoder, pipeline: GPUComputePipeline): void {
    if (pipeline === this.lastPipeline) return;
    pass.setPipeline(pipeline);
    this.lastPipeline = pipeline;
    this.lastBindGroup = null;
    if (this.#pipelines.length < BATCH_PIPELINES_KEPT) this.#pipelines.push(pipeline);
  }

  /**
   * Binds group 0 of `pass` (the open pass). A bind group bound already under
   * the same pipeline, with the same dynamic offset (the arena gives identical
   * consecutive info words one offset), is not set again: pass state persists
   * across dispatches, so the call would change nothing, yet it would cost a
   * WebGPU call and, with a dynamic offset, a descriptor rebind in the driver.
   *
   * @param pass The open pass.
   * @param bindGroup The bind group.
   * @param dynamic Its one dynamic offset (the info words), or null.
   */
  setBindGroup(pass: GPUComputePassEncoder, bindGroup: GPUBindGroup, dynamic: Uint32Array | null): void {
    if (dynamic !== null) {
      const offset = dynamic[0]!;
      if (bindGroup === this.lastBindGroup && offset === this.lastOffset) return;
      pass.setBindGroup(0, bindGroup, dynamic, 0, 1);
      this.lastBindGroup = bindGroup;
      this.lastOffset = offset;
    } else if (bindGroup !== this.lastBindGroup || this.lastOffset !== -1) {
      pass.setBindGroup(0, bindGroup);
      this.lastBindGroup = bindGroup;
      this.lastOffset = -1;
    }
  }

  /** Ends the open pass, if any. */
  endPass(): void {
    if (this.pass !== null) {
      this.pass.end();
      this.pass = null;
      this.lastPipeline = null;
      this.lastBindGroup = null;
      this.counts.valid = 0;
    }
  }

  /**
   * The encoder with no pass open, in the normal segment, ready for a copy;
   * counts one command.
   *
   * @returns The encoder.
   */
  encoder(): GPUCommandEncoder {
    if (this.#segment !== null) this.switchSegment(null);
    this.endPass();
    this.commands++;
    return this.#encoderNow();
  }

  /**
   * Starts recording into the segment of `entry` (a pending pipeline) or the
   * normal one (`null`), finishing the current encoder when it holds commands.
   *
   * @param entry The pending pipeline, or null.
   */
  switchSegment(entry: PipelineEntry | null): void {
    if (this.commands > 0) this.#finishEncoder();
    this.#segment = entry;
  }

  /** What the current encoder holds; starts the next encoder's record. */
  #takeContents(): BatchContents {
    const contents = { commands: this.commands, pipelines: this.#pipelines, replays: this.replays };
    if (this.#pipelines.length > 0) this.#pipelines = [];
    this.replays = 0;
    return contents;
  }

  #finishEncoder(): void {
    this.endPass();
    if (this.#encoder === null) return;
    const device = this.#ctx.device;
    const entry = this.#segment;
    const contents = this.#takeContents();
    device.pushErrorScope("validation");
    const cb = this.#encoder.finish({ label: `${this.#host.label} commands #${this.#encoderNo}` });
    this.#queueScopeError(device.popErrorScope(), entry, contents);
    this.#encoder = null;
    this.#finished.push({ cb, entry, contents });
    this.commands = 0;
  }

  #batchError(err: GPUError, entry: PipelineEntry | null, contents: BatchContents | null): ServerError {
    // WebGPU drops a whole command buffer that fails validation: say what did not run.
    const lost = contents === null || contents.commands === 0
      ? ""
      : `; none of the batch's ${contents.commands} commands ran (kernels: ${kernelsOf(contents) || "none"})`;
    return entry === null
      ? new DeviceValidationError(`${this.#host.label}: a submitted batch failed validation: ${err.message}${lost}`, {
        cause: err,
      })
      : new LaunchError(
        "unknown",
        entry.kernel.name,
        `${entry.kernel.name}: dispatch failed validation: ${err.message}`,
        {
          cause: err,
        },
      );
  }

  #submitScoped(items: Finished[], entry: PipelineEntry | null): void {
    const { device, queue } = this.#ctx;
    device.pushErrorScope("validation");
    queue.submit(items.map((i) => i.cb));
    this.#queueScopeError(device.popErrorScope(), entry, merged(items));
  }

  /**
   * Queues the error a validation scope caught, once known; nothing when the
   * segment's pipeline failed (its compile error is already queued).
   */
  #queueScopeError(
    popped: Promise<GPUError | null>,
    entry: PipelineEntry | null,
    contents: BatchContents | null,
  ): void {
    this.#host.errors.track(popped.then((err) => {
      if (err === null) return;
      if (entry === null) {
        this.#host.errors.push(this.#batchError(err, null, contents));
        return;
      }
      return entry.checked.then(() => {
        if (entry.state !== "failed") this.#host.errors.push(this.#batchError(err, entry, contents));
      });
    }));
  }

  /**
   * Ends the pass, uploads the info arena and submits everything finished
   * and encoded. Returns the number of command buffers handed to the queue
   * (0 when there was nothing to submit).
   *
   * @returns Command buffers submitted.
   */
  submit(): number {
    this.endPass();
    if (!this.hasWork) return 0;
    this.#arena.upload(this.#ctx.queue);
    if (this.#finished.length === 0 && this.#segment === null && this.#encoder !== null) {
      // The common case, one command buffer of the normal segment: one error scope covers its finish and submit.
      const { device, queue } = this.#ctx;
      const contents = this.#takeContents();
      device.pushErrorScope("validation");
      queue.submit([this.#encoder.finish({ label: `${this.#host.label} commands #${this.#encoderNo}` })]);
      this.#queueScopeError(device.popErrorScope(), null, contents);
      this.#encoder = null;
      this.commands = 0;
      this.tasks = 0;
      return 1;
    }
    if (this.commands > 0) this.#finishEncoder();
    const items = this.#finished;
    this.#finished = [];
    let normal: Finished[] = [];
    for (const item of items) {
      const entry = item.entry;
      if (entry === null || entry.state === "valid") {
        normal.push(item);
        continue;
      }
      if (normal.length > 0) this.#submitScoped(normal, null);
      normal = [];
      if (entry.state !== "failed") this.#submitScoped([item], entry);
    }
    if (normal.length > 0) this.#submitScoped(normal, null);
    this.tasks = 0;
    this.#segment = null;
    return items.length;
  }

  /**
   * After a submit: opens the next encoder and pass ahead of the next launch
   * when the `openPassAhead` setting asks for it.
   */
  prepareNext(): void {
    const ctx = this.#ctx;
    if (ctx.settings.openPassAhead && ctx.lost === null && !this.#host.timestamping && this.pass === null) {
      this.openPass();
    }
  }

  /** Drops everything encoded (teardown). */
  discard(): void {
    this.pass = null;
    this.#encoder = null;
    this.#finished = [];
    this.#pipelines = [];
    this.commands = 0;
    this.replays = 0;
  }
}

/** The contents of command buffers submitted together. */
function merged(items: readonly Finished[]): BatchContents {
  if (items.length === 1) return items[0]!.contents;
  return {
    commands: items.reduce((n, i) => n + i.contents.commands, 0),
    pipelines: items.flatMap((i) => i.contents.pipelines),
    replays: items.reduce((n, i) => n + i.contents.replays, 0),
  };
}
