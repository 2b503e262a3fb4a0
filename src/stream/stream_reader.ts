/**
 * Batched reads of one stream.
 *
 * A read encodes its copies into the stream's encoder at once, so it sees
 * exactly the work queued before it and none queued after. The submit and the
 * maps are deferred to a microtask, so every read requested in the same tick
 * shares one submit and one completion wait (Deno's waits cost at least 10 ms
 * each). The reads of a batch are packed into as few staging buffers as fit,
 * each mapped once over the bytes used only: a read's items go into one
 * buffer (unless they pass `maxBufferSize`), and a buffer taken for a later
 * read of the tick has room for twice the batch so far. Bytes come
 * from `getMappedRange(...).transfer()`: the one copy Deno makes, and no
 * second one (a size that is not a whole word is cut to its bytes, so a
 * result's buffer holds exactly what was read).
 *
 * With fast reads on, a staging buffer that has been mapped once before is
 * mapped early (see `readback_pool.ts`): no wait at all after the device is
 * done. Should an early range fail to read, fast reads are turned off for the
 * device and the batch is read again through the spec path.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { type DeviceLostError, ServerUnhealthyError } from "../errors.ts";
import type { ManagedMemory, Slice } from "../contract/managed_memory.ts";
import type { ReadbackBuffer } from "../memory/readback_pool.ts";
import type { DeviceContext } from "./device_context.ts";
import type { ReaderHost } from "./_stream_parts.ts";

/**
 * Smallest staging buffer a batch takes, so that the small reads of a tick
 * share it; smaller with fast reads, whose buffers each cool for ~10 ms after
 * use and so are many.
 */
const SEGMENT_MIN = 64 * 1024;
/** Bytes of the staging segments fast reads start with (a small read's class). */
export const SEGMENT_MIN_EARLY = 4 * 1024;

/** A staging buffer of a batch and the bytes its reads use (from 0). */
interface Segment {
  lent: ReadbackBuffer;
  used: number;
}

interface ReadRequest {
  /** Where each item's bytes are copied instead of being returned (the read then resolves with none). */
  into: readonly Uint8Array[] | null;
  /** Memory kept alive until the read completes (its copies may run after a release). */
  pinned: ManagedMemory[];
  /** Where each item lands: its segment (null when nothing is copied), byte offset there, and size. */
  parts: { seg: Segment | null; at: number; size: number }[];
  resolve: (value: Uint8Array<ArrayBuffer>[]) => void;
  reject: (reason: unknown) => void;
}

/** The reads requested in one tick. */
interface Batch {
  requests: ReadRequest[];
  segments: Segment[];
  /** Staging bytes its reads use. */
  bytes: number;
}

/** Read batching for one stream. */
export class StreamReader {
  #stream: ReaderHost;
  #ctx: DeviceContext;
  #batch: Batch | null = null;

  /**
   * Creates the instance.
   *
   * @param stream The stream whose encoder receives the copies.
   * @param ctx The device context.
   */
  constructor(stream: ReaderHost, ctx: DeviceContext) {
    this.#stream = stream;
    this.#ctx = ctx;
  }

  /**
   * Encodes copies of `items` and resolves with their bytes.
   *
   * @param items Resolved slices with a byte offset and size inside each.
   * @param into Memory to copy each item's bytes into (as long as the item),
   * in pieces of at most 4 MiB, instead of returning them: no buffer of the
   * item's size is made (shared memory that a collective reuses).
   * @returns The bytes of each item, exactly `size` long; none with `into`.
   */
  read(
    items: readonly { slice: Slice; offset: number; size: number }[],
    into: readonly Uint8Array[] | null = null,
  ): Promise<Uint8Array<ArrayBuffer>[]> {
    const batch = this.#batch ?? this.#schedule();
    const { promise, resolve, reject } = Promise.withResolvers<Uint8Array<ArrayBuffer>[]>();
    const request: ReadRequest = { into, pinned: [], parts: [], resolve, reject };
    const unpin = () => {
      for (const m of request.pinned) m.unpin();
      request.pinned = [];
    };
    request.resolve = (v) => {
      unpin();
      resolve(v);
    };
    request.reject = (e) => {
      unpin();
      reject(e);
    };
    const early = this.#ctx.fastReads.active;
    const max = this.#ctx.settings.maxBufferSize;
    let remaining = 0;
    for (const it of items) remaining += alignUp(it.size, 8);
    for (const it of items) {
      if (it.size === 0) {
        request.parts.push({ seg: null, at: 0, size: 0 });
        continue;
      }
      // Offsets of getMappedRange are multiples of 8; each item fits a staging buffer on its own.
      const bytes = alignUp(it.size, 8);
      let seg = batch.segments.at(-1);
      if (seg === undefined || seg.used + bytes > seg.lent.size) {
        // Room for the rest of this read, and for later reads of the tick as the batch grows (at most twice its bytes).
        const room = Math.min(max, Math.max(early ? SEGMENT_MIN_EARLY : SEGMENT_MIN, remaining, 2 * batch.bytes));
        seg = { lent: this.#stream.staging.acquire(room, early), used: 0 };
        batch.segments.push(seg);
      }
      remaining -= bytes;
      batch.bytes += bytes;
      request.parts.push({ seg, at: seg.used, size: it.size });
      seg.used += bytes;
      this.#stream.usePage(it.slice.page);
      it.slice.owner.pin();
      request.pinned.push(it.slice.owner);
      this.#stream.copy(
        it.slice.page,
        it.slice.page.storage.resource!,
        it.slice.offset + it.offset,
        seg.lent.buffer,
        seg.used - bytes,
        alignUp(it.size, 4),
      );
    }
    batch.requests.push(request);
    return promise;
  }

  /** Starts the batch of this tick, run in a microtask. */
  #schedule(): Batch {
    const batch: Batch = { requests: [], segments: [], bytes: 0 };
    this.#batch = batch;
    queueMicrotask(() => {
      this.#batch = null;
      this.#run(batch).catch((cause) => {
        // Never leave a read hanging or a rejection unhandled (settled reads ignore this).
        const error = this.#lost("read failed", cause);
        for (const r of batch.requests) r.reject(error);
      });
    });
    return batch;
  }

  /** The device's loss when known, else a `DeviceLostError` saying what failed. */
  #lost(what: string, cause: unknown): DeviceLostError {
    return this.#ctx.lossOf(`${this.#stream.label}: ${what}`, cause);
  }

  /**
   * Submits the batch's copies, maps its staging buffers with one wait (none
   * when they map early), and settles each read. Every staging buffer goes
   * back to the pool unmapped once the reads are settled; on every failure
   * path (a device loss, a destroy while waiting, a mapping or read-back that
   * throws) the buffers the batch holds are destroyed instead (a cooling one
   * once its early map settles), and every read still waiting rejects.
   */
  async #run(batch: Batch): Promise<void> {
    const stream = this.#stream;
    const ctx = this.#ctx;
    const { requests, segments } = batch;
    let what = "read failed";
    try {
      await stream.awaitHeld();
      if (stream.hasWork) stream.submit(); // this batch's copies may not have been submitted yet
      const target = ctx.submitIndex;
      if (ctx.lost) throw ctx.lost;
      what = "mapping read staging buffers failed";
      await this.#map(segments, ctx.fastReads.active);
      ctx.completed(target);
      await stream.errors.settle();
      // Lost or destroyed while waiting: the stream's pool may be gone with it, and the reads are rejected anyway.
      if (ctx.lost) throw ctx.lost;
      what = "reading back a staging buffer failed";
      const errors = stream.errors.drain();
      const failure = errors.length > 0 ? new ServerUnhealthyError(stream.slot, errors) : null;
      let out: Uint8Array<ArrayBuffer>[][] | null = null;
      if (failure === null) {
        try {
          out = requests.map(extract);
        } catch (cause) {
          if (!segments.some((s) => s.lent.mappedEarly) || ctx.lost) throw cause;
          // An early range could not be read: the spec path from here on, for this batch too.
          ctx.fastReads.disable(`reading an early-mapped staging buffer threw (${String(cause)})`);
          for (const s of segments) s.lent.unmap();
          await this.#map(segments, false);
          if (ctx.lost) throw ctx.lost;
          out = requests.map(extract);
        }
      }
      for (const s of segments) {
        s.lent.unmap();
        stream.staging.release(s.lent);
      }
      segments.length = 0;
      // Fast reads awaited in a loop never let the event loop turn, so leftover maps could not settle: let it.
      const turn = ctx.fastReads.active ? stream.staging.turn() : null;
      if (turn !== null) await turn;
      requests.forEach((r, i) => out === null ? r.reject(failure) : r.resolve(out[i]!));
    } catch (cause) {
      // The device went away, or the client was destroyed, part way: every read still
      // waiting gets the loss (settled reads ignore it), and nothing escapes unhandled.
      const error = this.#lost(what, cause);
      for (const r of requests) r.reject(error);
      // After a loss `unmap()` throws; `destroy()` unmaps and frees in every state.
      for (const s of segments) stream.staging.discard(s.lent);
    }
  }

  /**
   * Maps every segment over its used bytes: early where allowed, else with
   * one shared wait. With fast reads, the staging buffers wanted meanwhile
   * start priming once the maps are requested (the device is idle then, so
   * their own maps' polls cost nothing).
   */
  async #map(segments: readonly Segment[], early: boolean): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const s of segments) {
      const w = s.lent.map(s.used, early);
      if (w !== null) waits.push(w);
    }
    if (early) this.#stream.staging.primeWanted();
    if (waits.length > 0) await Promise.all(waits);
  }
}

/** Bytes per `getMappedRange` when a read copies into given memory. */
const INTO_PIECE = 4 << 20;

/** The bytes of each part of a read, from its mapped staging buffer (none when it copies into given memory). */
function extract(r: ReadRequest): Uint8Array<ArrayBuffer>[] {
  if (r.into !== null) {
    const into = r.into;
    r.parts.forEach((p, i) => {
      if (p.seg === null) return;
      const buffer = p.seg.lent.buffer;
      const dst = into[i]!;
      // Pieces of a few MiB: Deno copies each mapped range into a fresh buffer, which stays small and warm.
      for (let done = 0; done < p.size; done += INTO_PIECE) {
        const n = Math.min(INTO_PIECE, p.size - done);
        dst.set(new Uint8Array(buffer.getMappedRange(p.at + done, alignUp(n, 4)), 0, n), done);
      }
    });
    return [];
  }
  return r.parts.map((p) => {
    if (p.seg === null) return new Uint8Array(0);
    const range = p.seg.lent.buffer.getMappedRange(p.at, alignUp(p.size, 4));
    // A whole word moves as is; a partial one is cut to its bytes (the result's buffer holds nothing more).
    return new Uint8Array(p.size % 4 === 0 ? range.transfer() : range.transfer(p.size));
  });
}
