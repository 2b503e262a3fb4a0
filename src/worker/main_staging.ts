/**
 * Host staging memory of a worker client, on the main thread: `staging()`
 * lends views over pooled, already-touched `ArrayBuffer`s; writing one moves
 * its buffer to the worker (the view is detached, as a staging view handed
 * back by a write is), and the worker hands the buffer back after the write,
 * so repeated uploads neither allocate nor copy on the main thread.
 *
 * @module
 */

/** Pooled host buffers by power-of-two size class. */
export class MainStaging {
  #free = new Map<number, ArrayBuffer[]>();
  #ours = new WeakSet<ArrayBuffer>();
  #keep: number;

  /**
   * Creates the pool.
   *
   * @param keepPerClass Idle buffers kept per size class.
   */
  constructor(keepPerClass = 4) {
    this.#keep = keepPerClass;
  }

  /**
   * Lends one zero-offset view per size.
   *
   * @param sizes Bytes of each view (checked by the caller).
   * @returns The views.
   */
  lend(sizes: readonly number[]): Uint8Array[] {
    return sizes.map((size) => {
      let cls = 64;
      while (cls < size) cls *= 2;
      let buffer = this.#free.get(cls)?.pop();
      if (buffer === undefined) {
        buffer = new ArrayBuffer(cls);
        new Uint8Array(buffer).fill(0); // touch every page now, not during the upload
        this.#ours.add(buffer);
      }
      return new Uint8Array(buffer, 0, size);
    });
  }

  /** True when `view` is over a buffer this pool lent and that was not handed back yet. */
  owns(view: ArrayBufferView): boolean {
    return view.buffer instanceof ArrayBuffer && this.#ours.has(view.buffer) && !view.buffer.detached;
  }

  /**
   * Takes a lent view's buffer back without moving it anywhere (its bytes
   * were copied): the view is detached and the buffer pooled.
   *
   * @param view A view `owns` accepts.
   */
  recycle(view: ArrayBufferView): void {
    this.adopt((view.buffer as ArrayBuffer).transfer());
  }

  /**
   * Pools a buffer that comes back from the worker.
   *
   * @param buffer The buffer.
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
