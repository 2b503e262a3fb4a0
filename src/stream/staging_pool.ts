/**
 * Reusable `MAP_READ` staging buffers by power-of-two size class, so reads
 * create no buffer in steady state.
 *
 * @module
 */

/** A staging buffer lent to a read. */
export interface StagingBuffer {
  /** The `MAP_READ | COPY_DST` buffer. */
  readonly buffer: GPUBuffer;
  /** Its size class, in bytes. */
  readonly size: number;
}

/** Staging buffers of one stream. */
export class StagingPool {
  #device: GPUDevice;
  #label: string;
  #maxBufferSize: number;
  #free = new Map<number, GPUBuffer[]>();
  #keepPerClass: number;
  #created = 0;
  #heldBytes = 0;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param options Label prefix, `maxBufferSize`, and buffers kept per size class.
   */
  constructor(
    device: GPUDevice,
    options: { label: string; maxBufferSize: number; keepPerClass?: number },
  ) {
    this.#device = device;
    this.#label = options.label;
    this.#maxBufferSize = options.maxBufferSize;
    this.#keepPerClass = options.keepPerClass ?? 4;
  }

  /** Staging buffers created so far. */
  get created(): number {
    return this.#created;
  }

  /** Bytes held by idle staging buffers. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /**
   * Lends a staging buffer of at least `size` bytes (unmapped).
   *
   * @param size Bytes needed.
   * @returns The buffer and its size class.
   */
  acquire(size: number): StagingBuffer {
    let cls = 256;
    while (cls < size) cls *= 2;
    if (cls > this.#maxBufferSize) cls = Math.ceil(size / 4) * 4;
    const list = this.#free.get(cls);
    const reused = list?.pop();
    if (reused !== undefined) {
      this.#heldBytes -= cls;
      return { buffer: reused, size: cls };
    }
    this.#created++;
    const buffer = this.#device.createBuffer({
      label: `${this.#label} staging ${cls} B #${this.#created}`,
      size: cls,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    return { buffer, size: cls };
  }

  /**
   * Takes a staging buffer back (it must be unmapped).
   *
   * @param staging The buffer returned by `acquire`.
   */
  release(staging: StagingBuffer): void {
    let list = this.#free.get(staging.size);
    if (list === undefined) this.#free.set(staging.size, list = []);
    const keep = staging.size >= 64 * 1024 * 1024 ? 1 : this.#keepPerClass;
    if (list.length >= keep) {
      staging.buffer.destroy();
      return;
    }
    list.push(staging.buffer);
    this.#heldBytes += staging.size;
  }

  /** Destroys every idle staging buffer. */
  clear(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
    this.#heldBytes = 0;
  }
}
