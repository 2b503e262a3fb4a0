/**
 * A stream's side of compaction (`SliceMover`): the copies that move its
 * memory from one page to another, in its order.
 *
 * A compacting pool moves slices only inside a reservation of this stream
 * (never in a launch, a read or a submit), and only while the stream holds no
 * work back (held launches carry bind groups of the old places) and records no
 * graph. The stream's queued work is submitted first, so each copy comes after
 * every use of the memory the stream encoded; a page that another stream holds
 * unsubmitted work on takes no part (such a move would have to submit that
 * stream first), and memory that another stream's work, a graph, a read or
 * `getResource` uses is pinned, so it never moves. The copies go to the device
 * in a submit of their own, in an error scope of their own: a batch of the
 * stream that fails validation cannot take them with it. The old slices are
 * free from then on: whatever reuses them is ordered after the copies, as any
 * reuse of freed memory is after the work that used it.
 *
 * @module
 */

import { DeviceValidationError } from "../errors.ts";
import type { Page, Slice } from "../contract/managed_memory.ts";
import type { SliceMover } from "../memory/slice_mover.ts";
import type { DeviceContext } from "./device_context.ts";
import type { ErrorQueue } from "./error_queue.ts";

/** What the mover needs of its stream. */
export interface MoverHost {
  /** Label prefix of its GPU objects. */
  readonly label: string;
  /** Submission batch being encoded. */
  readonly epoch: number;
  /** True when commands are encoded, finished or held and not yet submitted. */
  readonly hasWork: boolean;
  /** True while launches are held back waiting for pipeline validations. */
  readonly holding: boolean;
  /** Its graph capture state (armed while a graph is prepared or recorded). */
  readonly capture: { readonly armed: boolean };
  /** The stream's error queue. */
  readonly errors: ErrorQueue;
  /** Submits everything encoded. */
  submit(): void;
}

/** Moves one stream's memory (see the module). */
export class StreamMover implements SliceMover {
  #stream: MoverHost;
  #ctx: DeviceContext;
  #encoder: GPUCommandEncoder | null = null;
  #copies = 0;
  #batches = 0;

  /**
   * Creates the mover of a stream.
   *
   * @param stream The stream.
   * @param ctx Its device context.
   */
  constructor(stream: MoverHost, ctx: DeviceContext) {
    this.#stream = stream;
    this.#ctx = ctx;
  }

  begin(): boolean {
    const stream = this.#stream;
    if (this.#ctx.lost !== null || stream.holding || stream.capture.armed) return false;
    if (stream.hasWork) stream.submit();
    return !stream.hasWork;
  }

  canUse(page: Page): boolean {
    const owner = page.useStream as { readonly epoch: number; readonly hasWork: boolean } | null;
    return owner === null || owner === this.#stream || page.useEpoch !== owner.epoch || !owner.hasWork;
  }

  copy(from: Slice, to: Slice, bytes: number): void {
    const src = from.page.storage.resource!;
    const dst = to.page.storage.resource!;
    if (this.#encoder === null) {
      this.#encoder = this.#ctx.device.createCommandEncoder({
        label: `${this.#stream.label} compaction #${++this.#batches}`,
      });
    }
    this.#encoder.copyBufferToBuffer(src, from.offset, dst, to.offset, bytes);
    this.#copies++;
  }

  end(): void {
    const encoder = this.#encoder;
    if (encoder === null) return;
    this.#encoder = null;
    const copies = this.#copies;
    this.#copies = 0;
    const { device, queue } = this.#ctx;
    device.pushErrorScope("validation");
    queue.submit([encoder.finish({ label: `${this.#stream.label} compaction #${this.#batches}` })]);
    this.#ctx.submitIndex++;
    const errors = this.#stream.errors;
    const label = this.#stream.label;
    errors.track(
      device.popErrorScope().then((err) => {
        if (err === null) return;
        errors.push(
          new DeviceValidationError(`${label}: ${copies} compaction copies failed validation: ${err.message}`, {
            cause: err,
          }),
        );
      }),
    );
  }
}
