/**
 * The entry module of a worker client's Worker. It serves only as the entry
 * of a Worker started under `WORKER_NAME`: imported anywhere else (the
 * runtime imports it statically, so that `deno cache`, `deno compile` and
 * vendoring include it), it does nothing.
 *
 * The Worker ends itself: once its host has destroyed the device it calls
 * `self.close()`; the main thread never terminates a Worker that holds a
 * live device (Deno 2.9.6 crashes at exit in a few percent of such runs).
 *
 * @module
 */

import type { InitMessage, PayloadMessage, WorkerMessage } from "../wire/protocol.ts";
import { WORKER_NAME } from "../wire/protocol.ts";
import { WorkerHost } from "./worker_host.ts";

/** The worker global scope, as far as this module uses it. */
interface Scope {
  name: string;
  onmessage: ((e: MessageEvent<InitMessage | PayloadMessage>) => void) | null;
  postMessage(message: WorkerMessage, transfer?: Transferable[]): void;
  close(): void;
}

/**
 * Serves a worker client from this Worker: waits for `init`, makes the
 * host, and hands it every payload.
 *
 * @param scope The worker's global scope.
 */
export function serve(scope: Scope): void {
  let host: WorkerHost | null = null;
  const early: PayloadMessage[] = [];
  scope.onmessage = (e) => {
    const m = e.data;
    if (m.type === "payload") {
      if (host === null) early.push(m);
      else host.onPayload(m.id, m.data);
      return;
    }
    if (m.type === "init") {
      const post = (message: WorkerMessage, transfer: Transferable[] = []) => scope.postMessage(message, transfer);
      WorkerHost.start(m, post, () => {
        scope.onmessage = null;
        scope.close();
      }).then((h) => {
        host = h;
        for (const p of early.splice(0)) h?.onPayload(p.id, p.data);
      });
    }
  };
}

const scope = globalThis as unknown as Partial<Scope>;
if (
  import.meta.main && typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined" &&
  scope.name === WORKER_NAME
) {
  serve(scope as Scope);
}
