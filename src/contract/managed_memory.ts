/**
 * Reference-counted memory descriptors, slices and pages.
 *
 * JavaScript has no destructors, so every reference is counted explicitly
 * (CubeCL's `ManagedMemoryHandle` and `ManagedMemoryBinding`):
 *
 * - `refs` counts every holder of the descriptor: the pool's slice, each user
 *   handle, and each pinned binding. A slice is free, and may be reused, when
 *   `refs <= 1` (only the pool holds it).
 * - `handles` counts the pool's slice and each user handle, but not bindings.
 *   `canMut()` is true when `handles <= 2`: the pool plus exactly one user.
 *
 * @module
 */

import { allocateMemoryId } from "../ids.ts";
import type { StorageHandle } from "./storage.ts";

/**
 * A memory descriptor shared by every clone of a handle (CubeCL's
 * `ManagedMemoryHandle`), with explicit reference counts. A server binds it to
 * a slice in `initializeMemory`; handles hold it.
 *
 * @example Counting references
 * ```ts
 * import { ManagedMemory } from "@denogpu/runtime/server";
 *
 * const memory = new ManagedMemory(2, 2); // the pool's reference and one handle's
 * console.log(memory.canMut()); // true: one user
 * memory.retain(); // a clone
 * console.log(memory.canMut()); // false
 * memory.pin(); // a binding of queued work: keeps the slice, not counted by canMut
 * memory.drop();
 * console.log(memory.canMut(), memory.isFree()); // true false
 * ```
 */
export class ManagedMemory {
  /** Process-unique id. */
  readonly id: number = allocateMemoryId();
  /**
   * The slice this descriptor owns, or `null` while uninitialised.
   *
   * @ignore
   */
  slice: Slice | null = null;
  /** Holders of the descriptor: the pool's slice, user handles, pinned bindings. */
  refs: number;
  /** Holders that count for `canMut`: the pool's slice and user handles. */
  handles: number;
  #server: object | null = null;
  #count = false;

  /**
   * Creates the instance.
   *
   * @param refs Initial descriptor references.
   * @param handles Initial handle references.
   */
  constructor(refs = 1, handles = 1) {
    this.refs = refs;
    this.handles = handles;
  }

  /**
   * The server whose `initializeMemory` bound this descriptor, or `null`
   * before that. A server refuses to read, write or hand out memory of
   * another server.
   */
  get server(): object | null {
    return this.#server;
  }

  /**
   * Records the server that bound this descriptor (`initializeMemory`).
   *
   * @param server The server.
   * @param count True for an indirect workgroup count (its writes are checked against the dispatch limit).
   */
  boundBy(server: object, count = false): void {
    this.#server = server;
    this.#count = count;
  }

  /** True for an indirect workgroup count (`createCount`, `emptyCount`). */
  get count(): boolean {
    return this.#count;
  }

  /** True when the pool's slice plus exactly one user handle refer to it. */
  canMut(): boolean {
    return this.handles <= 2;
  }

  /** True when nothing but the pool refers to it. */
  isFree(): boolean {
    return this.refs <= 1;
  }

  /** Adds a handle reference (a user clone). */
  retain(): void {
    this.refs++;
    this.handles++;
    if (this.refs === 2) this.#revived();
  }

  /** Drops a handle reference. */
  drop(): void {
    this.refs--;
    this.handles--;
    if (this.refs <= 1) this.#released(this.refs === 1);
  }

  /** Adds a binding reference (keeps the slice alive, not counted by `canMut`). */
  pin(): void {
    this.refs++;
    if (this.refs === 2) this.#revived();
  }

  /** Drops a binding reference. */
  unpin(): void {
    this.refs--;
    if (this.refs <= 1) this.#released(this.refs === 1);
  }

  /**
   * The slice became free: tells its page (`Page.noteFreed`: a pool that
   * indexes free slices then looks at this slice only) and, on the step from
   * live to free, takes its bytes off the page's tally of live bytes.
   */
  #released(live: boolean): void {
    const slice = this.slice;
    if (slice === null) return;
    slice.page.noteFreed(slice);
    if (live && slice.owner === this) slice.page.tally.live -= slice.effectiveSize;
  }

  /** A free slice is held again (a graph keeps memory released during its capture): its bytes count again. */
  #revived(): void {
    const slice = this.slice;
    if (slice !== null && slice.owner === this) slice.page.tally.live += slice.effectiveSize;
  }
}

/** Live bytes of a pool's pages, kept as slices are reserved and freed (a pool shares one among its pages). */
export interface LiveTally {
  /** Bytes of the live slices, padding included. */
  live: number;
}

/** One device buffer held by a pool, carved into slices. */
export class Page {
  /** The storage handle (id, size, buffer). */
  readonly storage: StorageHandle;
  /** Slices in offset order. Exclusive, persistent and direct pages hold one. */
  slices: Slice[] = [];
  /** Stream that last encoded work using this page (set by the stream layer). */
  useStream: unknown = null;
  /** That stream's submission epoch when it last used the page. */
  useEpoch: number = -1;
  /**
   * Set when one of its slices becomes free (its last handle or binding
   * dropped); a pool that indexes free slices clears it once it has looked.
   */
  released: boolean = false;
  /**
   * Set by a pool that indexes free slices: the queue of its pages with
   * slices freed since it last looked. A slice that becomes free goes to
   * `freed`, and the page to this queue at the first such slice (while
   * `released` is false), so the pool visits only the pages and slices that
   * changed, however many it holds. Null for pools that scan their pages.
   */
  queue: Page[] | null = null;
  /** The slices freed since the pool last looked (only while `queue` is set); the pool empties it. */
  readonly freed: Slice[] = [];
  /** The live bytes of its pool (shared by the pool's pages). */
  readonly tally: LiveTally;

  /**
   * Creates the instance.
   *
   * @param storage The storage handle backing the page.
   * @param tally Its pool's tally of live bytes (a page of its own by default).
   */
  constructor(storage: StorageHandle, tally: LiveTally = { live: 0 }) {
    this.storage = storage;
    this.tally = tally;
  }

  /**
   * Notes that `slice` of this page became free (a handle released it, or
   * compaction moved its memory away): flags the page and, when its pool
   * indexes free slices, lists the slice on the page and the page in the
   * pool's queue.
   *
   * @param slice The slice, of this page.
   */
  noteFreed(slice: Slice): void {
    const queue = this.queue;
    if (queue !== null) {
      if (!this.released) queue.push(this);
      this.freed.push(slice);
    }
    this.released = true;
  }

  /** True while the page has no device buffer yet (dry run). */
  get lazy(): boolean {
    return this.storage.resource === null;
  }
}

/** One allocation carved out of a page. */
export class Slice {
  /** The page it lives in. */
  page: Page;
  /** Byte offset in the page, always a multiple of the pool alignment. */
  offset: number;
  /** Requested bytes (for a free slice: its whole extent). */
  size: number;
  /** Alignment padding after `size`. */
  padding: number;
  /** The descriptor that owns this slice. */
  owner: ManagedMemory;
  /** Pool bookkeeping: true while a best-fit pool lists this free slice in its index. */
  indexed: boolean = false;

  /**
   * Creates the instance.
   *
   * @param page The page.
   * @param offset Byte offset in the page.
   * @param size Requested bytes.
   * @param padding Alignment padding.
   * @param owner Owning descriptor.
   */
  constructor(page: Page, offset: number, size: number, padding: number, owner: ManagedMemory) {
    this.page = page;
    this.offset = offset;
    this.size = size;
    this.padding = padding;
    this.owner = owner;
  }

  /** Bytes the slice occupies: `size + padding`. */
  get effectiveSize(): number {
    return this.size + this.padding;
  }

  /** True when no user handle and no binding refers to the slice. */
  isFree(): boolean {
    return this.owner.isFree();
  }

  /**
   * Hands the slice to a fresh descriptor with one caller reference besides
   * the pool's, and returns that descriptor.
   */
  assignFresh(): ManagedMemory {
    const desc = new ManagedMemory(2, 2);
    desc.slice = this;
    this.detach();
    this.owner = desc;
    return desc;
  }

  /**
   * Unlinks the slice from its descriptor (when the descriptor still points
   * at it), so a stale handle to memory that is merged away or freed no
   * longer reaches it and resolves as stale, whatever the pool.
   */
  detach(): void {
    if (this.owner.slice === this) this.owner.slice = null;
  }
}

/** Makes a free placeholder descriptor owned only by a pool. */
export function poolOwned(): ManagedMemory {
  return new ManagedMemory(1, 1);
}
