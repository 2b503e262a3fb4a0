/**
 * Batched reads of one stream.
 *
 * A read encodes its copies into the stream's encoder at once, so it sees
 * exactly the work queued before it and none queued after. The submit and the
 * `mapAsync` calls are deferred to a microtask, so every read requested in the
 * same tick shares one submit and one completion wait (Deno's waits cost at
 * least 10 ms each). A read's ranges share one staging buffer as long as their
 * sum fits in `maxBufferSize`, and take more buffers beyond it. Bytes come
 * from `getMappedRange(...).transfer()`: the one copy Deno makes, and no
 * second one (a size that is not a whole word is cut to its bytes, so a
 * result's buffer holds exactly what was read).
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { type DeviceLostError, ServerUnhealthyError } from "../errors.ts";
import type { ManagedMemory, Slice } from "../contract/managed_memory.ts";
import type { DeviceContext } from "./device_context.ts";
import type { StagingBuffer } from "./staging_pool.ts";
import type { ReaderHost } from "./_stream_parts.ts";

interface ReadRequest {
  /** Its staging buffers (each at most `maxBufferSize`), with the bytes used in each; empty when nothing is copied. */
  staging: { lent: StagingBuffer; bytes: number }[];
  /** Memory kept alive until the read completes (its copies may run after a release). */
  pinned: ManagedMemory[];
  /** Where each item lands: its staging buffer, byte offset there, and size. */
  parts: { buf: number; at: number; size: number }[];
  resolve: (value: Uint8Array<ArrayBuffer>[]) => void;
  reject: (reason: unknown) => void;
}

/** Read batching for one stream. */
export class StreamReader {
  #stream: ReaderHost;
  #ctx: DeviceContext;
  #batch: ReadRequest[] = [];
  #scheduled = false;

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
   * @returns The bytes of each item, exactly `size` long.
   */
  read(items: readonly { slice: Slice; offset: number; size: number }[]): Promise<Uint8Array<ArrayBuffer>[]> {
    // Items share a staging buffer while their sum fits in maxBufferSize (each item fits on its own).
    const limit = this.#ctx.settings.maxBufferSize;
    const parts: { buf: number; at: number; size: number }[] = [];
    const sizes: number[] = [];
    for (const it of items) {
      const bytes = alignUp(it.size, 8);
      if (it.size > 0) {
        if (sizes.length === 0 || sizes[sizes.length - 1]! + bytes > limit) sizes.push(0);
        parts.push({ buf: sizes.length - 1, at: sizes[sizes.length - 1]!, size: it.size });
        sizes[sizes.length - 1]! += bytes;
      } else {
        parts.push({ buf: -1, at: 0, size: 0 });
      }
    }
    const { promise, resolve, reject } = Promise.withResolvers<Uint8Array<ArrayBuffer>[]>();
    const request: ReadRequest = {
      staging: [],
      pinned: [],
      parts,
      resolve: () => {},
      reject: () => {},
    };
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
    if (sizes.length > 0) {
      for (const it of items) {
        if (it.size === 0) continue;
        this.#stream.usePage(it.slice.page);
        it.slice.owner.pin();
        request.pinned.push(it.slice.owner);
      }
      for (const bytes of sizes) request.staging.push({ lent: this.#stream.staging.acquire(bytes), bytes });
      items.forEach((it, i) => {
        if (it.size === 0) return;
        const part = parts[i]!;
        this.#stream.copy(
          it.slice.page,
          it.slice.page.storage.resource!,
          it.slice.offset + it.offset,
          request.staging[part.buf]!.lent.buffer,
          part.at,
          alignUp(it.size, 4),
        );
      });
    }
    this.#batch.push(request);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        const batch = this.#batch;
        this.#batch = [];
        this.#run(batch).catch((cause) => {
          // Never leave a read hanging or a rejection unhandled (settled reads ignore this).
          const error = this.#lost("read failed", cause);
          for (const r of batch) r.reject(error);
        });
      });
    }
    return promise;
  }

  /** The device's loss when known, else a `DeviceLostError` saying what failed. */
  #lost(what: string, cause: unknown): DeviceLostError {
    return this.#ctx.lossOf(`${this.#stream.label}: ${what}`, cause);
  }

  /**
   * Submits the batch's copies, maps its staging buffers with one wait, and
   * settles each read. Every staging buffer goes back to the pool unmapped
   * once its read is settled; on every failure path (a device loss, a destroy
   * while waiting, a mapping or read-back that throws) the buffers the batch
   * still holds are destroyed instead, and every read still waiting rejects.
   */
  async #run(batch: ReadRequest[]): Promise<void> {
    const stream = this.#stream;
    const ctx = this.#ctx;
    // The staging buffers this batch still holds (each leaves when it is back in the pool).
    const mapped = batch.flatMap((r) => r.staging);
    const held = new Set(mapped.map((s) => s.lent));
    let what = "read failed";
    try {
      await stream.awaitHeld();
      if (stream.hasWork) stream.submit(); // this batch's copies may not have been submitted yet
      const target = ctx.submitIndex;
      if (ctx.lost) throw ctx.lost;
      what = "mapping read staging buffers failed";
      await Promise.all(mapped.map((s) => s.lent.buffer.mapAsync(GPUMapMode.READ, 0, s.bytes)));
      ctx.completed(target);
      await stream.errors.settle();
      // Lost or destroyed while waiting: the stream's pool may be gone with it, and the reads are rejected anyway.
      if (ctx.lost) throw ctx.lost;
      what = "reading back a staging buffer failed";
      const errors = stream.errors.drain();
      const failure = errors.length > 0 ? new ServerUnhealthyError(stream.slot, errors) : null;
      for (const r of batch) {
        const staging = r.staging;
        let out: Uint8Array<ArrayBuffer>[] | null = null;
        if (failure === null) {
          out = r.parts.map((p) => {
            if (p.size === 0) return new Uint8Array(0);
            const range = staging[p.buf]!.lent.buffer.getMappedRange(p.at, alignUp(p.size, 4));
            // A whole word moves as is; a partial one is cut to its bytes (the result's buffer holds nothing more).
            return new Uint8Array(p.size % 4 === 0 ? range.transfer() : range.transfer(p.size));
          });
        }
        for (const s of staging) {
          s.lent.buffer.unmap();
          held.delete(s.lent);
          stream.staging.release(s.lent);
        }
        if (out === null) r.reject(failure);
        else r.resolve(out);
      }
    } catch (cause) {
      // The device went away, or the client was destroyed, part way: every read still
      // waiting gets the loss (settled reads ignore it), and nothing escapes unhandled.
      const error = this.#lost(what, cause);
      for (const r of batch) r.reject(error);
      // After a loss `unmap()` throws; `destroy()` unmaps and frees in every state.
      for (const staging of held) staging.buffer.destroy();
    }
  }
}
