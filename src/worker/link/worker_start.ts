/**
 * Starting the Worker of a worker client. The link never imports the
 * Worker's side (which holds the server): `worker_client.ts` imports the
 * Worker's entry statically, so that `deno cache` and `deno compile` include it.
 *
 * @module
 */

import { ServerError } from "../../errors.ts";
import type { ServerOptions } from "../../options/server_options.ts";
import { allocateRing, type RingBuffers } from "../wire/command_ring.ts";
import { reviveError } from "../wire/error_codec.ts";
import { type InitMessage, type ReadyMessage, WORKER_NAME, type WorkerMessage } from "../wire/protocol.ts";
import { workerClosed } from "../wire/thread_exit.ts";
import { checkWorkerPermission } from "./worker_permission.ts";
import { backendAdvice } from "./backend_advice.ts";

/**
 * Starts a Worker and has it make its server.
 *
 * @param options Server options (cloneable).
 * @param ringSlots Slots of the command ring.
 * @returns The Worker, the ring's memory and the worker's `ready` message.
 * @throws What making the server threw in the worker (revived), or
 * `Deno.errors.NotCapable` when the Worker's modules cannot be read.
 */
export async function startWorker(
  options: ServerOptions,
  ringSlots: number,
): Promise<{ worker: Worker; buffers: RingBuffers; ready: ReadyMessage }> {
  const url = new URL("../host/worker_main.ts", import.meta.url);
  checkWorkerPermission(url);
  const buffers = allocateRing(ringSlots);
  const worker = new Worker(url, { type: "module", name: WORKER_NAME });
  const first = await new Promise<WorkerMessage | Error>((resolve) => {
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => resolve(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      resolve(new ServerError(`the worker client's Worker could not start: ${e.message}`));
    };
    const init: InitMessage = { type: "init", options, ring: buffers };
    worker.postMessage(init);
  });
  if (first instanceof Error) {
    worker.terminate(); // it never made a device
    throw first;
  }
  if (first.type === "failed") {
    workerClosed(first.thread); // it closed itself; the process waits for its thread at the end
    throw reviveError(first.error);
  }
  if (first.type !== "ready") throw new ServerError(`the worker client's Worker sent "${first.type}" first`);
  backendAdvice.started();
  return { worker, buffers, ready: first };
}
