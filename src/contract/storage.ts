/**
 * The raw allocator behind the memory pools (CubeCL's `ComputeStorage`).
 *
 * A storage hands out device buffers by id. Pools never touch `GPUBuffer`
 * directly, so they run against a fake storage in tests. Deallocation is
 * deferred: `dealloc` only queues the id, and `flush` destroys queued buffers
 * once no unsubmitted command can reference them any more.
 *
 * @module
 */

/** One device buffer owned by a storage. */
export interface StorageHandle {
  /** Storage-unique id of the buffer. */
  readonly id: number;
  /** Size of the buffer in bytes (at least the size asked for). */
  readonly size: number;
  /**
   * The device buffer, or `null` while the handle is lazy (minted under a dry
   * run and not yet backed by memory).
   */
  resource: GPUBuffer | null;
}

/** Allocates, looks up and frees device buffers. */
export interface ComputeStorage {
  /** Offset and size alignment, in bytes, every pool rounds to. */
  readonly alignment: number;
  /** Number of buffers currently held (created and not yet destroyed). */
  readonly liveBuffers: number;
  /** Number of buffers created since the storage was made. */
  readonly createdBuffers: number;
  /**
   * Creates a buffer of at least `size` bytes. With `lazy`, only an id is
   * minted; {@linkcode ComputeStorage.materialize} backs it later.
   * Throws `IoError` (`buffer-too-big`) when the size can never fit.
   */
  alloc(size: number, label: string, lazy?: boolean): StorageHandle;
  /** Gives a lazy handle its device buffer. Throws `IoError` (`storage-mapping-failed`). */
  materialize(handle: StorageHandle): void;
  /** Queues the buffer for destruction; it is destroyed at the next safe `flush`. */
  dealloc(handle: StorageHandle): void;
  /** Destroys queued buffers that no unsubmitted work can still use. */
  flush(): void;
}
