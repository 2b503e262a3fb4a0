/**
 * Writes into a stream's memory, ordered after every queued use of the
 * memory's page. Word-aligned bytes go through `queue.writeBuffer` (split into
 * chunks, a submit after each, above the upload threshold); while the stream
 * holds work, a write is held too, with its own copy of the bytes. A length
 * that is not a multiple of 4 can keep the bytes after it intact: the last
 * word is then merged on the device by the byte patch kernel.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import type { StreamId } from "../ids.ts";
import type { Slice } from "../contract/managed_memory.ts";
import { BYTE_PATCH_KERNEL, tailWord } from "./byte_patch.ts";
import type { DeviceContext } from "./device_context.ts";
import type { HeldWork } from "./held_work.ts";
import type { WriterHost } from "./_stream_parts.ts";

/** Writes of one stream. */
export class StreamWriter {
  #stream: WriterHost;
  #ctx: DeviceContext;
  #held: HeldWork;

  /**
   * Creates the instance.
   *
   * @param parts The stream, the device context and the stream's held work.
   */
  constructor(parts: { stream: WriterHost; ctx: DeviceContext; held: HeldWork }) {
    this.#stream = parts.stream;
    this.#ctx = parts.ctx;
    this.#held = parts.held;
  }

  /**
   * Writes bytes into a resolved slice (see `Stream.write`).
   *
   * @param slice The destination slice.
   * @param offset Byte offset inside the slice (a multiple of 4).
   * @param data The bytes (exactly the bytes to write).
   * @param owner The stream that owns the memory.
   * @param exact Keep the bytes after `data` intact.
   */
  write(slice: Slice, offset: number, data: Uint8Array, owner: StreamId, exact: boolean): void {
    if (data.byteLength === 0) return;
    const tail = exact ? data.byteLength % 4 : 0;
    const body = tail === 0 ? data : data.subarray(0, data.byteLength - tail);
    if (body.byteLength > 0) this.#writeWords(slice, slice.offset + offset, body);
    if (tail > 0) {
      const word = slice.offset + offset + body.byteLength;
      const bindStart = word - (word % this.#ctx.settings.storageOffsetAlignment);
      const [keep, value] = tailWord(data, tail);
      const binding = {
        memory: slice.owner,
        offsetStart: bindStart - slice.offset,
        offsetEnd: 0,
        stream: owner,
        size: word + 4 - slice.offset,
      };
      const entry = this.#ctx.pipelines.get(BYTE_PATCH_KERNEL, 1, true);
      this.#stream.dispatch.launch(
        entry,
        [binding],
        new Uint32Array([(word - bindStart) / 4, keep, value]),
        1,
        1,
        1,
        null,
      );
    }
  }

  /** Writes whole words at byte `at` of the slice's buffer (held while the stream holds work). */
  #writeWords(slice: Slice, at: number, data: Uint8Array): void {
    const stream = this.#stream;
    const page = slice.page;
    const buffer = page.storage.resource!;
    const held = this.#held;
    if (held.current !== null) {
      // Held launches may use this memory: hold the write too, with its own copy of the bytes.
      stream.usePage(page); // others that use this memory submit this stream (and its held write) first
      const copy = new Uint8Array(alignUp(data.byteLength, 4));
      copy.set(data);
      slice.owner.pin(); // the memory must outlive a release before the held write is issued
      held.current.ops.push({ kind: "write", buffer, offset: at, data: copy, memory: slice.owner });
      return;
    }
    stream.settlePage(page);
    // Deno accepts views over SharedArrayBuffer too; the cast only satisfies the DOM typings.
    let src = data as Uint8Array<ArrayBuffer>;
    if (src.byteLength % 4 !== 0) {
      src = new Uint8Array(alignUp(data.byteLength, 4));
      src.set(data);
    }
    const queue = this.#ctx.queue;
    const { uploadChunkThreshold, uploadChunkSize } = this.#ctx.settings;
    if (src.byteLength <= uploadChunkThreshold) {
      queue.writeBuffer(buffer, at, src, 0, src.byteLength);
      return;
    }
    for (let done = 0; done < src.byteLength; done += uploadChunkSize) {
      const n = Math.min(uploadChunkSize, src.byteLength - done);
      queue.writeBuffer(buffer, at + done, src, done, n);
      queue.submit([]);
    }
  }
}
