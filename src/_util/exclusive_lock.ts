/**
 * An async mutex with reentrancy, for `exclusive()` and `profile()`: one
 * section runs at a time; a section may call `exclusive()` again from inside
 * (its async context is recognised while the section runs) without deadlocking.
 *
 * JavaScript cannot stop unrelated synchronous calls (a `launch` from another
 * task) while a section awaits; those are not serialised. Sections are.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** A reentrant async lock. */
export class ExclusiveLock {
  /**
   * The section whose async context a call runs in. The context outlives the
   * section (a timer or promise callback scheduled inside it), so a call is
   * nested only while that section is still open.
   */
  #inside = new AsyncLocalStorage<{ open: boolean }>();
  #tail: Promise<void> = Promise.resolve();

  /**
   * Runs `fn` holding the lock.
   *
   * @param fn The section.
   * @returns What `fn` returns.
   */
  async run<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.#inside.getStore()?.open === true) return await fn();
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((r) => (release = r));
    await previous;
    const section = { open: true };
    try {
      return await this.#inside.run(section, fn);
    } finally {
      section.open = false;
      release();
    }
  }
}
