/**
 * Reusable host staging memory (the WebGPU analogue of CubeCL's pinned
 * staging buffers).
 *
 * On Deno the cost of moving large data is dominated by page faults of fresh
 * allocations. `lend(sizes)` hands out views over pooled, already-touched
 * `ArrayBuffer`s; writing such a view with `write`/`create` gives its buffer
 * back to the pool (the view is detached: ownership moved to the runtime, as a
 * Rust `Bytes` would be moved), so a loop of uploads allocates nothing. A
 * worker client's pool lives on the main thread: its Worker hands each
 * buffer back after the write (`adopt`).
 *
 * @module
 */

/** Pooled host buffers by power-of-two size class. */
export class HostStagingPool {
  #free = new Map<number, ArrayBuffer[]>();
  #ours = new WeakSet<ArrayBuffer>();
  #keep: number;
  #created = 0;

  /**
   * Creates the pool.
   *
   * @param keepPerClass Idle buffers kept per size class.
   */
  constructor(keepPerClass = 4) {
    this.#keep = keepPerClass;
  }

  /** Buffers created so far. */
  get created(): number {
    return this.#created;
  }

  /**
   * Lends one zero-offset view per size.
   *
   * @param sizes Bytes of each view.
   * @returns The views, each exactly its size.
   */
  lend(sizes: readonly number[]): Uint8Array[] {
    return sizes.map((size) => {
      let cls = 64;
      while (cls < size) cls *= 2;
      const buffer = this.#free.get(cls)?.pop() ?? this.#create(cls);
      return new Uint8Array(buffer, 0, size);
    });
  }

  #create(size: number): ArrayBuffer {
    const buffer = new ArrayBuffer(size);
    new Uint8Array(buffer).fill(0); // touch every page now, not during the upload
    this.#ours.add(buffer);
    this.#created++;
    return buffer;
  }

  /** True when `view` is a staging view lent by this pool and not yet returned. */
  owns(view: ArrayBufferView): boolean {
    return view.buffer instanceof ArrayBuffer && this.#ours.has(view.buffer) && !view.buffer.detached;
  }

  /**
   * Takes the buffer behind a lent view back; the view is detached.
   *
   * @param view A view returned by `lend`.
   */
  recycle(view: ArrayBufferView): void {
    const old = view.buffer as ArrayBuffer;
    if (!this.#ours.has(old) || old.detached) return;
    this.adopt(old.transfer());
  }

  /**
   * Pools a lent buffer that comes back another way: a worker client moves
   * a staging view's buffer to its Worker with the write, and the Worker
   * hands it back afterwards.
   *
   * @param buffer The buffer (a power-of-two size class, as `lend` makes them).
   */
  adopt(buffer: ArrayBuffer): void {
    this.#ours.add(buffer);
    let list = this.#free.get(buffer.byteLength);
    if (list === undefined) this.#free.set(buffer.byteLength, list = []);
    if (list.length < this.#keep) list.push(buffer);
  }

  /** Drops every idle buffer. */
  clear(): void {
    this.#free.clear();
  }
}
