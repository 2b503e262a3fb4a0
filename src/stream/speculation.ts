/**
 * Work held back while a pipeline's validation is pending.
 *
 * Deno reports a compile error one microtask after the pipeline is created.
 * Rather than isolating every launch of a new kernel in its own command buffer
 * (a submit each), a stream records the launches, copies and writes issued
 * meanwhile, fully resolved, and encodes them once the validations are known:
 * launches of failed kernels are dropped (their errors are queued), the rest
 * run in order, in one batch. Only when something forces a submit before the
 * validations are known (a write into memory the held work uses, another
 * stream binding it, a full batch) is the held work encoded with per-pipeline
 * isolation instead.
 *
 * @module
 */

import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { ManagedMemory, Page } from "../contract/managed_memory.ts";
import type { IndirectSource } from "../graph/graph.ts";

/** One operation held back. */
export type HeldOp =
  | {
    /** A dispatch. */
    readonly kind: "launch";
    /** Its pipeline. */
    readonly entry: PipelineEntry;
    /** Its bind group. */
    readonly bindGroup: GPUBindGroup;
    /** Pages it uses, marked again when it is finally encoded. */
    readonly pages: readonly Page[];
    /** A copy of its info words (they enter the arena when it is encoded), or null. */
    readonly info: Uint32Array | null;
    /** Static counts. */
    readonly x: number;
    /** Static counts. */
    readonly y: number;
    /** Static counts. */
    readonly z: number;
    /** Indirect source (buffer and offset of the three counts), or null. */
    readonly indirect: IndirectSource | null;
    /** Memory of other streams it pinned, handed to the stream's pending pins when it is encoded, or null. */
    readonly pins: ManagedMemory[] | null;
  }
  | {
    /** A buffer-to-buffer copy. */
    readonly kind: "copy";
    /** The storage page it reads or writes, or null. */
    readonly page: Page | null;
    /** Source. */
    readonly src: GPUBuffer;
    /** Source offset. */
    readonly srcOffset: number;
    /** Destination. */
    readonly dst: GPUBuffer;
    /** Destination offset. */
    readonly dstOffset: number;
    /** Bytes. */
    readonly size: number;
  }
  | {
    /** A `queue.writeBuffer` (its bytes are copied when held). */
    readonly kind: "write";
    /** Destination. */
    readonly buffer: GPUBuffer;
    /** Destination offset. */
    readonly offset: number;
    /** The bytes (a multiple of 4 long). */
    readonly data: Uint8Array<ArrayBuffer>;
    /** The memory written, pinned while the write is held. */
    readonly memory: ManagedMemory;
  };

/** The held work of one stream. */
export class Speculation {
  /** Operations in issue order. */
  readonly ops: HeldOp[] = [];
  /** Pipelines whose validation the held work waits for. */
  readonly entries: Set<PipelineEntry> = new Set();
  /** Dispatches held. */
  launches = 0;

  /** True when every pipeline involved has a known validation state. */
  get known(): boolean {
    for (const e of this.entries) if (e.state === "pending") return false;
    return true;
  }

  /** Resolves once every pipeline involved has a known validation state. */
  async settled(): Promise<void> {
    while (!this.known) {
      await Promise.all([...this.entries].filter((e) => e.state === "pending").map((e) => e.checked));
    }
  }
}
