/**
 * Fakes for tests that need no GPU (in the spirit of CubeCL's dummy server):
 * a storage that hands out numbered buffers and records what happened.
 */

import type { ComputeStorage, StorageHandle } from "../src/contract/storage.ts";

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

  flush(): void {
    for (const h of this.#pending) {
      if (h.resource !== null) this.#live--;
      h.resource = null;
      this.destroyed.push(h.id);
    }
    this.#pending.length = 0;
  }
}
