/**
 * Fakes for tests that need no GPU (in the spirit of CubeCL's dummy server):
 * a storage that hands out numbered buffers and records what happened.
 */

import type { ComputeStorage, StorageHandle } from "../src/contract/storage.ts";
import type { Page, Slice } from "../src/contract/managed_memory.ts";
import type { SliceMover } from "../src/memory/slice_mover.ts";

/** A storage of fake buffers with a chosen alignment. */
export class FakeStorage implements ComputeStorage {
  readonly alignment: number;
  /** Sizes of every allocation, in order. */
  readonly allocations: number[] = [];
  /** Ids destroyed, in order. */
  readonly destroyed: number[] = [];
  #pending: StorageHandle[] = [];
  #next = 1;
  #live = 0;
  #created = 0;
  /** When set, `alloc` throws it (to simulate a driver failure). */
  failWith: Error | null = null;

  constructor(alignment = 32) {
    this.alignment = alignment;
  }

  get liveBuffers(): number {
    return this.#live;
  }

  get createdBuffers(): number {
    return this.#created;
  }

  alloc(size: number, _label: string, lazy = false): StorageHandle {
    if (this.failWith) throw this.failWith;
    const h: StorageHandle = { id: this.#next++, size, resource: null };
    this.allocations.push(size);
    if (!lazy) this.materialize(h);
    return h;
  }

  materialize(handle: StorageHandle): void {
    if (handle.resource !== null) return;
    handle.resource = { label: `fake ${handle.id}` } as unknown as GPUBuffer;
    this.#live++;
    this.#created++;
  }

  dealloc(handle: StorageHandle): void {
    this.#pending.push(handle);
  }

  /** Ids queued for destruction at the next `flush`. */
  protected pendingIds(): number[] {
    return this.#pending.map((h) => h.id);
  }

  flush(): void {
    for (const h of this.#pending) {
      if (h.resource !== null) this.#live--;
      h.resource = null;
      this.destroyed.push(h.id);
    }
    this.#pending.length = 0;
  }
}

/** A fake storage whose buffers hold bytes (for tests that check what moves carry). */
export class ByteStorage extends FakeStorage {
  /** Each live buffer's bytes, by storage id. */
  readonly bytes: Map<number, Uint8Array> = new Map();

  override materialize(handle: StorageHandle): void {
    if (handle.resource !== null) return;
    super.materialize(handle);
    this.bytes.set(handle.id, new Uint8Array(handle.size));
  }

  override flush(): void {
    for (const id of this.pendingIds()) this.bytes.delete(id);
    super.flush();
  }

  /** The bytes of a slice's extent in its page (a view). */
  of(slice: Slice, size = slice.size): Uint8Array {
    const b = this.bytes.get(slice.page.storage.id);
    if (b === undefined) throw new Error(`storage ${slice.page.storage.id} holds no bytes (destroyed or lazy)`);
    return b.subarray(slice.offset, slice.offset + size);
  }
}

/**
 * A `SliceMover` over a `ByteStorage` that copies at once (a device that ran
 * every queued command already), recording every move; `ready` and `usable`
 * refuse moves as a stream with held work, or a page another stream holds
 * unsubmitted work on, would.
 */
export class FakeMover implements SliceMover {
  readonly moves: { from: { page: Page; offset: number }; to: { page: Page; offset: number }; bytes: number }[] = [];
  /** Steps begun and ended. */
  begun = 0;
  ended = 0;
  ready = true;
  usable: (page: Page) => boolean = () => true;
  #storage: ByteStorage | null;

  constructor(storage: ByteStorage | null = null) {
    this.#storage = storage;
  }

  begin(): boolean {
    if (!this.ready) return false;
    this.begun++;
    return true;
  }

  canUse(page: Page): boolean {
    return this.usable(page);
  }

  copy(from: Slice, to: Slice, bytes: number): void {
    if (from.page === to.page) throw new Error("a move within one buffer (WebGPU refuses copies within a buffer)");
    if (bytes % 4 !== 0) throw new Error(`a copy of ${bytes} B (not a multiple of 4)`);
    this.moves.push({
      from: { page: from.page, offset: from.offset },
      to: { page: to.page, offset: to.offset },
      bytes,
    });
    const s = this.#storage;
    if (s !== null) s.of(to, bytes).set(s.of(from, bytes));
  }

  end(): void {
    this.ended++;
  }
}
