/**
 * A stream's error queue: asynchronous errors (compile errors, validation
 * scopes, stale bindings) wait here until a draining call (`flush`, `sync`,
 * a read, a profile or capture) raises them. Promises that may still queue
 * errors are tracked, so a draining call first waits for them to settle.
 *
 * @module
 */

import { type ServerError, ServerUnhealthyError } from "../errors.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";

/** Queued errors and the tracked checks that may add to them. */
export class ErrorQueue {
  #slot: number;
  #onDrain: (errors: readonly ServerError[]) => void;
  #errors: ServerError[] = [];
  #pending = 0;
  #idle: PromiseWithResolvers<void> | null = null;
  #settled = (): void => {
    if (--this.#pending > 0 || this.#idle === null) return;
    const idle = this.#idle;
    this.#idle = null;
    idle.resolve();
  };
  #pendingLaunches = new Map<PipelineEntry, number>();
  /**
   * While the stream records a graph: the recording's list, which receives
   * every error queued, so `endCapture` fails with it even when a drain
   * inside the window has already reported it.
   */
  sink: ServerError[] | null = null;

  /**
   * Creates the queue.
   *
   * @param parts The stream slot (for `ServerUnhealthyError`) and what to call
   * with the errors whenever a drain finds any.
   */
  constructor(parts: { slot: number; onDrain: (errors: readonly ServerError[]) => void }) {
    this.#slot = parts.slot;
    this.#onDrain = parts.onDrain;
  }

  /** Errors queued and not yet drained. */
  get length(): number {
    return this.#errors.length;
  }

  /**
   * Queues an error; it is raised by the next draining call.
   *
   * @param error The error.
   */
  push(error: ServerError): void {
    this.#errors.push(error);
    this.sink?.push(error);
  }

  /**
   * Tracks a promise that may queue errors; draining calls wait for it first.
   *
   * @param p The promise (its rejection is ignored).
   */
  track(p: Promise<unknown>): void {
    this.#pending++;
    p.then(this.#settled, this.#settled);
  }

  /**
   * Waits until every tracked check has settled, including checks tracked
   * while it waits. All callers share one promise per busy period, so a
   * caller that flushes again and again without yielding to the event loop
   * adds nothing that grows with the checks still pending.
   *
   * @returns A promise that resolves once no check is pending.
   */
  settle(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return (this.#idle ??= Promise.withResolvers<void>()).promise;
  }

  /**
   * Empties the queue and returns what it held (reporting it first when it held anything).
   *
   * @returns The errors, oldest first.
   */
  drain(): ServerError[] {
    const errors = this.#errors;
    this.#errors = [];
    if (errors.length > 0) this.#onDrain(errors);
    return errors;
  }

  /**
   * Drains the queue, throwing when it held anything.
   *
   * @throws {ServerUnhealthyError} When errors were queued.
   */
  throwIfAny(): void {
    if (this.#errors.length > 0) throw new ServerUnhealthyError(this.#slot, this.drain());
  }

  /**
   * Notes that a launch whose pipeline is still being validated was encoded
   * or skipped: once the validation fails, its error is queued once per launch.
   *
   * @param entry The pipeline being validated.
   */
  watchPipeline(entry: PipelineEntry): void {
    const n = this.#pendingLaunches.get(entry);
    if (n !== undefined) {
      this.#pendingLaunches.set(entry, n + 1);
      return;
    }
    this.#pendingLaunches.set(entry, 1);
    this.track(entry.checked.then(() => {
      const count = this.#pendingLaunches.get(entry) ?? 0;
      this.#pendingLaunches.delete(entry);
      if (entry.state === "failed") { for (let i = 0; i < count; i++) this.push(entry.error!); }
    }));
  }
}
