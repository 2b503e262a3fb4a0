/**
 * `RemoteMemory`: the main thread's descriptor of memory that lives in a
 * worker client's Worker. Handles count their references on it as on any
 * `ManagedMemory` (`canMut` keeps its meaning); when the last user handle is
 * released, it tells the worker, in ring order, to release the memory there.
 *
 * @module
 */

import { ManagedMemory } from "../../contract/managed_memory.ts";

/**
 * Memory held by a worker's server, counted on the main thread.
 *
 * @example Released memory tells its owner once
 * ```ts
 * import { RemoteMemory } from "./remote_memory.ts";
 *
 * const freed: number[] = [];
 * const memory = new RemoteMemory(0, (m) => freed.push(m.slot));
 * memory.retain(); // a clone
 * memory.drop();
 * memory.drop(); // the last user reference
 * console.log(freed.length); // 1
 * ```
 */
export class RemoteMemory extends ManagedMemory {
  /** The index records name this memory by. */
  readonly slot: number;
  #onFree: ((memory: RemoteMemory) => void) | null;

  /**
   * Makes the descriptor of one fresh allocation: the worker's reference and one user handle.
   *
   * @param slot The index records name it by.
   * @param onFree Called once when the last user handle is released.
   */
  constructor(slot: number, onFree: (memory: RemoteMemory) => void) {
    super(2, 2);
    this.slot = slot;
    this.#onFree = onFree;
  }

  /** Drops a handle reference; the last one frees the memory in the worker. */
  override drop(): void {
    super.drop();
    if (this.handles <= 1 && this.#onFree !== null) {
      const onFree = this.#onFree;
      this.#onFree = null;
      onFree(this);
    }
  }
}
