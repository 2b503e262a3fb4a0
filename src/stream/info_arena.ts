/**
 * Per-stream arena for kernel info words (scalars, shapes).
 *
 * Each launch appends its words at an aligned offset of a host mirror; the
 * arena is uploaded with one `writeBuffer` per submit, and each dispatch binds
 * it with a dynamic offset. So changing scalars costs no GPU object and no
 * `writeBuffer` per launch. Identical consecutive infos share one offset.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { allocateStorageId } from "../ids.ts";
import type { InfoWords } from "../contract/types.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Words of an upload small enough to compare with what the buffer holds already. */
const SHADOW_WORDS = 64;

/** The info arena of one stream. */
export class InfoArena {
  /** The device buffer bound as the info binding. */
  buffer!: GPUBuffer;
  /** Process-unique id of `buffer` (for bind group keys). */
  id!: number;
  #device: GPUDevice;
  #label: string;
  #align: number;
  #maxCapacity: number;
  #capacity = 0;
  #u32!: Uint32Array<ArrayBuffer>;
  #i32!: Int32Array<ArrayBuffer>;
  #f32!: Float32Array<ArrayBuffer>;
  #used = 0;
  #lastOffset = -1;
  #lastWords = 0;
  /** What the device buffer holds from the last small upload (its first `#shadowWords` words). */
  #shadow = new Uint32Array(SHADOW_WORDS);
  #shadowWords = 0;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param options Capacity in bytes, dynamic-offset alignment, the most bytes
   * the buffer may grow to (`maxBufferSize`, default unbounded) and label.
   */
  constructor(
    device: GPUDevice,
    options: { capacity: number; alignment: number; maxCapacity?: number; label: string },
  ) {
    this.#device = device;
    this.#label = options.label;
    this.#align = options.alignment;
    this.#maxCapacity = options.maxCapacity ?? Infinity;
    this.#allocate(alignUp(options.capacity, 4));
  }

  /** Creates the device buffer (with a new id) and its host mirror at `capacity` bytes. */
  #allocate(capacity: number): void {
    this.#capacity = capacity;
    this.buffer = this.#device.createBuffer({
      label: `${this.#label} (${formatBytesExact(capacity)})`,
      size: capacity,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    this.id = allocateStorageId();
    this.#shadowWords = 0; // a new buffer holds nothing yet
    const host = new ArrayBuffer(capacity);
    this.#u32 = new Uint32Array(host);
    this.#i32 = new Int32Array(host);
    this.#f32 = new Float32Array(host);
  }

  /** Bytes appended since the last upload. */
  get used(): number {
    return this.#used;
  }

  /** Capacity in bytes. */
  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Appends info words and returns their byte offset, or -1 when they do not
   * fit in what is left (the caller submits, which uploads and empties the arena).
   *
   * @param info The words.
   * @returns Byte offset of the words in the arena, or -1.
   */
  push(info: InfoWords): number {
    const n = info.length;
    const last = this.#lastOffset;
    if (last >= 0 && n === this.#lastWords) {
      const base = last >>> 2;
      const u32 = this.#u32;
      let same = true;
      if (info instanceof Float32Array) {
        // Compared as numbers, the words must be equal and not NaN (two NaNs may
        // differ in their bits), and a zero must keep its sign.
        const f = this.#f32;
        for (let i = 0; i < n; i++) {
          const a = f[base + i]!;
          const b = info[i]!;
          if (a !== b || (a === 0 && 1 / a !== 1 / b)) {
            same = false;
            break;
          }
        }
      } else {
        for (let i = 0; i < n; i++) {
          if (u32[base + i] !== (info[i]! >>> 0)) {
            same = false;
            break;
          }
        }
      }
      if (same) return last;
    }
    const offset = alignUp(this.#used, this.#align);
    const bytes = n * 4;
    if (offset + bytes > this.#capacity) return -1;
    const at = offset >>> 2;
    if (info instanceof Uint32Array) this.#u32.set(info, at);
    else if (info instanceof Float32Array) this.#f32.set(info, at);
    else this.#i32.set(info, at);
    this.#used = offset + bytes;
    this.#lastOffset = offset;
    this.#lastWords = n;
    return offset;
  }

  /**
   * Makes room for at least `bytes` bytes in an empty arena by growing the
   * buffer (only called right after an upload, so no queued work uses it).
   * It doubles, but not past `maxCapacity` (the caller refuses infos above
   * the binding size limit, which is at most `maxBufferSize`).
   *
   * @param bytes Bytes needed by one info.
   * @returns True when the buffer was replaced (bind groups naming it are stale).
   */
  ensure(bytes: number): boolean {
    if (bytes <= this.#capacity) return false;
    this.buffer.destroy();
    this.#allocate(alignUp(Math.max(bytes, Math.min(this.#capacity * 2, this.#maxCapacity)), 4));
    return true;
  }

  /**
   * Uploads the words appended since the last upload, and empties the arena.
   * A small batch whose words the buffer holds already (launches that repeat
   * their info words from one submit to the next) is not uploaded again: each
   * `writeBuffer` costs a staging allocation and a copy in wgpu.
   *
   * @param queue The device's queue.
   */
  upload(queue: GPUQueue): void {
    if (this.#used === 0) return;
    const n = alignUp(this.#used, 4) >>> 2;
    this.#used = 0;
    this.#lastOffset = -1;
    const u32 = this.#u32;
    if (n > SHADOW_WORDS) {
      queue.writeBuffer(this.buffer, 0, u32, 0, n);
      this.#shadowWords = 0;
      return;
    }
    const shadow = this.#shadow;
    if (n <= this.#shadowWords) {
      let same = true;
      for (let i = 0; i < n; i++) {
        if (u32[i] !== shadow[i]) {
          same = false;
          break;
        }
      }
      if (same) return;
    }
    queue.writeBuffer(this.buffer, 0, u32, 0, n);
    shadow.set(u32.subarray(0, n));
    this.#shadowWords = n;
  }
}
