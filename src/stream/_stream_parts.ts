/**
 * What a stream's parts see of their stream. Each part (binding resolution,
 * indirect counts, held work, dispatch encoding, graph recording, reads,
 * writes) gets the narrow view it needs, not the `Stream` itself, so the parts
 * depend on this file and the stream on them, never the other way round.
 *
 * @module
 */

import type { BufferBinding, InfoWords } from "../contract/types.ts";
import type { Page, Slice } from "../contract/managed_memory.ts";
import type { GraphRecorder, IndirectSource } from "../graph/graph.ts";
import type { BindGroupCache } from "../kernel/bind_group_cache.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { TimestampProfiler } from "../profile/timestamp_profiler.ts";
import type { CommandQueue } from "./command_queue.ts";
import type { ReadbackPool } from "../memory/readback_pool.ts";
import type { ErrorQueue } from "./error_queue.ts";

/** Resolves a binding's descriptor through its owner stream (slow path). */
export type OwnerResolver = (binding: BufferBinding) => Slice;

/** Marks pages used by the batch being encoded (see `Stream.usePage`). */
export interface PageUser {
  /** Submission batch being encoded. */
  readonly epoch: number;
  /** Marks `page` used by the batch being encoded, submitting the stream that holds unsubmitted work on it first. */
  usePage(page: Page): void;
}

/** What binding resolution needs of its stream. */
export interface ResolverHost extends PageUser {
  /** Slot index. */
  readonly slot: number;
  /** Resolves a binding through the stream that owns it. */
  readonly resolveOwner: OwnerResolver;
}

/** Copies bytes between buffers in stream order (held while launches are). */
export interface StreamCopier {
  /** See `Stream.copy`. */
  copy(page: Page | null, src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number): void;
}

/** What the indirect count sources need of their stream. */
export interface IndirectHost extends PageUser {
  /** Slot index. */
  readonly slot: number;
  /** Label prefix of its GPU objects. */
  readonly label: string;
}

/** The dispatch paths a stream's held work releases into. */
export interface HeldDispatch {
  /** See `DispatchPaths.pushInfo`. */
  pushInfo(info: InfoWords): number;
  /** See `DispatchPaths.markPages`. */
  markPages(pages: readonly Page[]): void;
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
  ): void;
}

/** What held work needs of its stream. */
export interface HeldHost extends PageUser {
  /** The encoder, open pass and submission queue. */
  readonly queue: CommandQueue;
  /** The dispatch paths. */
  readonly dispatch: HeldDispatch;
  /** Submits everything encoded. */
  submit(): void;
  /** Submits first when a profile's query set has no room for the next timed pass. */
  roomForTimedPass(): boolean;
}

/** What graph recording needs of its stream. */
export interface RecordingHost {
  /** The device's bind group cache (its scratch arrays hold the last resolved bindings). */
  readonly bindGroups: BindGroupCache;
  /** The stream's error queue (a pipeline still being validated is watched there). */
  readonly errors: ErrorQueue;
}

/** What dispatch encoding needs of its stream. */
export interface EncoderHost extends PageUser, RecordingHost {
  /** The recording in progress, or null. */
  readonly recorder: GraphRecorder | null;
  /** The encoder, open pass and submission queue. */
  readonly queue: CommandQueue;
  /** True while every dispatch gets its own timestamped pass. */
  readonly timestamping: boolean;
  /** The device timestamp profiler, or null. */
  readonly profiler: TimestampProfiler | null;
  /** Submits everything encoded. */
  submit(): void;
  /** Submits first when a profile's query set has no room for the next timed pass. */
  roomForTimedPass(): boolean;
}

/** What reads need of their stream. */
export interface ReaderHost extends PageUser, StreamCopier {
  /** Slot index. */
  readonly slot: number;
  /** Label prefix of its GPU objects. */
  readonly label: string;
  /** Read staging buffers. */
  readonly staging: ReadbackPool;
  /** True when commands are encoded, finished or held and not yet submitted. */
  readonly hasWork: boolean;
  /** Submits everything encoded. */
  submit(): void;
  /** Waits until held work can be released without isolation. */
  awaitHeld(): Promise<void>;
  /** The stream's error queue. */
  readonly errors: ErrorQueue;
}

/** The launch path writes use for a partial last word (the byte patch kernel). */
export interface WriterDispatch {
  /** See `DispatchPaths.launch`. */
  launch(
    entry: PipelineEntry,
    bindings: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
  ): void;
}

/** What writes need of their stream. */
export interface WriterHost extends PageUser {
  /** The dispatch paths. */
  readonly dispatch: WriterDispatch;
  /** Submits whichever stream holds unsubmitted work on `page`. */
  settlePage(page: Page): void;
  /** Submits everything encoded. */
  submit(): void;
}
