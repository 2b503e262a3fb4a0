/**
 * A stream's held work (see `Speculation`): launches of kernels whose
 * validation is pending are held back, with the copies and writes issued
 * after them, and released in order once every validation they wait for is
 * known, or at once (with per-pipeline isolation) when a submit is forced.
 *
 * @module
 */

import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { DeviceContext } from "./device_context.ts";
import type { ErrorQueue } from "./error_queue.ts";
import { type HeldOp, Speculation } from "./speculation.ts";
import type { HeldHost } from "./_stream_parts.ts";

/** Dispatches held while validations are pending before a submit is forced. */
const HOLD_LIMIT = 16384;

/** What held work is built from: its stream, and the stream's encoding internals it shares. */
export interface HeldWorkParts {
  /** The stream. */
  readonly stream: HeldHost;
  /** The device context. */
  readonly ctx: DeviceContext;
  /** The stream's error queue. */
  readonly errors: ErrorQueue;
  /** The stream's pins waiting for its next submission. */
  readonly pins: ManagedMemory[];
  /** The stream's one-word dynamic offset array. */
  readonly dyn: Uint32Array;
}

/** The held work of one stream. */
export class HeldWork {
  /** The work held now, or null (read on the launch path; only this class sets it). */
  current: Speculation | null = null;
  #parts: HeldWorkParts;
  #releasing = false;

  /**
   * Creates the instance.
   *
   * @param parts The stream and what it shares with its held work.
   */
  constructor(parts: HeldWorkParts) {
    this.#parts = parts;
  }

  /** True while released held work is being encoded (it may still bind memory freed during the hold). */
  get releasing(): boolean {
    return this.#releasing;
  }

  /**
   * Holds a launch back until the validations it waits for are known.
   *
   * @param op The launch, fully resolved (its info words copied).
   */
  hold(op: Extract<HeldOp, { kind: "launch" }>): void {
    const entry = op.entry;
    let held = this.current;
    const fresh = held === null;
    if (held === null) held = this.current = new Speculation();
    if (entry.state !== "valid") {
      this.#parts.errors.watchPipeline(entry);
      held.entries.add(entry);
    }
    held.ops.push(op);
    if (fresh) this.#releaseWhenKnown(held);
    if (++held.launches >= HOLD_LIMIT) this.#parts.stream.submit();
  }

  /** Releases held work, if any, at once: with isolation when validations are still pending. */
  releaseNow(): void {
    const held = this.current;
    if (held !== null) this.#release(!held.known);
  }

  /** Waits until held work, if any, can be released without isolation. */
  async whenKnown(): Promise<void> {
    while (this.current !== null && !this.current.known) await this.current.settled();
  }

  /** Forgets held work without encoding it (teardown). */
  drop(): void {
    this.current = null;
  }

  /** Releases held work, without isolation, as soon as every validation it waits for is known. */
  #releaseWhenKnown(held: Speculation): void {
    this.#parts.errors.track(
      held.settled().then(() => {
        if (this.current !== held) return;
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
    const held = this.current;
    if (held === null) return;
    this.current = null;
    // Submits in the middle must not find the stream idle: buffers freed during
    // the hold are destroyed only once every held launch that binds them is encoded.
    this.#releasing = true;
    try {
      this.#encode(held, isolate);
    } finally {
      this.#releasing = false;
    }
  }

  /** Encodes the ops of released held work in order (see `#release`). */
  #encode(held: Speculation, isolate: boolean): void {
    const parts = this.#parts;
    const stream = parts.stream;
    const q = stream.queue;
    for (const op of held.ops) {
      if (op.kind === "copy") {
        if (op.page !== null) stream.usePage(op.page);
        q.encoder().copyBufferToBuffer(op.src, op.srcOffset, op.dst, op.dstOffset, op.size);
        continue;
      }
      if (op.kind === "write") {
        stream.submit();
        parts.ctx.queue.writeBuffer(op.buffer, op.offset, op.data);
        parts.pins.push(op.memory); // its pin lasts until the write's submission completes
        continue;
      }
      const entry = op.entry;
      if (entry.state === "failed") {
        // Never dispatched: its pins are dropped with it.
        if (op.pins !== null) { for (const m of op.pins) m.unpin(); }
        continue;
      }
      stream.roomForTimedPass(); // a submit for its timed pass comes before its pages are marked
      // Info first: pushing may submit a full arena, which ends the segment and
      // the batch; the segment and the page marks belong to the batch that encodes the dispatch.
      if (op.info !== null) parts.dyn[0] = stream.dispatch.pushInfo(op.info);
      const segment = entry.state === "pending" && isolate ? entry : null;
      if (segment !== q.segment) q.switchSegment(segment);
      stream.dispatch.markPages(op.pages); // the batch may have changed since the launch was held
      // Its pins belong to the submission that runs it, not to one made before it was encoded.
      if (op.pins !== null) parts.pins.push(...op.pins);
      const dynamic = op.info === null ? null : parts.dyn;
      stream.dispatch.encodeDispatch(
        entry.pipeline,
        op.bindGroup,
        dynamic,
        op.x,
        op.y,
        op.z,
        op.indirect,
        entry.kernel.name,
      );
    }
  }
}
