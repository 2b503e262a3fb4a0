/**
 * One tuning shared by every call waiting on the same key: each call joins
 * with its own abort signal and progress callback; the tuning is aborted only
 * when every call waiting on it has aborted.
 *
 * @module
 */

/** A tuning under way and the calls waiting on it. */
export interface Shared<T, P> {
  /** Settles with the tuning. */
  readonly promise: Promise<T>;
  /** Aborts the tuning. */
  readonly controller: AbortController;
  /** Progress callbacks of the waiting calls. */
  readonly listeners: Set<(progress: P) => void>;
  /** Calls waiting. */
  waiters: number;
  /** Called once when the last waiter aborts, before the tuning is aborted. */
  onAbort?: () => void;
}

/**
 * Starts `work` (on the next microtask, so the first caller joins first).
 *
 * @param work The tuning, given the shared signal and a progress emitter.
 * @returns The shared tuning, with no waiter yet.
 */
export function startShared<T, P>(work: (signal: AbortSignal, emit: (p: P) => void) => Promise<T>): Shared<T, P> {
  const controller = new AbortController();
  const listeners = new Set<(p: P) => void>();
  const emit = (p: P) => {
    for (const l of [...listeners]) {
      try {
        l(p);
      } catch {
        // a failing progress callback must not fail the tuning others wait on
      }
    }
  };
  const promise = Promise.resolve().then(() => work(controller.signal, emit));
  return { promise, controller, listeners, waiters: 0 };
}

/**
 * Waits on a shared tuning.
 *
 * @param s The tuning.
 * @param signal Stops this wait (rejecting with its reason); the last waiter's abort aborts the tuning.
 * @param onProgress Receives progress while this call waits.
 * @returns The tuning's result.
 */
export function joinShared<T, P>(
  s: Shared<T, P>,
  signal: AbortSignal | undefined,
  onProgress: ((p: P) => void) | undefined,
): Promise<T> {
  s.waiters++;
  if (onProgress !== undefined) s.listeners.add(onProgress);
  const leave = () => {
    s.waiters--;
    if (onProgress !== undefined) s.listeners.delete(onProgress);
  };
  if (signal === undefined) return s.promise.finally(leave);
  return new Promise<T>((resolve, reject) => {
    const aborted = () => {
      leave();
      if (s.waiters === 0) {
        s.onAbort?.();
        s.controller.abort(signal.reason);
      }
      reject(signal.reason);
    };
    signal.addEventListener("abort", aborted, { once: true });
    s.promise.then(resolve, reject).finally(() => {
      signal.removeEventListener("abort", aborted);
      if (!signal.aborted) leave();
    });
  });
}
