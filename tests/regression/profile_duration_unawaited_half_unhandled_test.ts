/**
 * Found by auditing profiles under destroy: `endProfile` returns two promises,
 * `ticks` and `dispatches`. When the client was destroyed (or the device
 * lost) before they resolved, both rejected with `DeviceLostError`, and the
 * one the program did not await became an "Uncaught (in promise)" that
 * killed the process. Awaiting one half must be enough; the other still
 * rejects for whoever awaits it.
 */

import assert from "node:assert/strict";
import { createClient, DeviceLostError } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";

/** Runs `fn`, then a macrotask later returns the rejections nobody handled meanwhile. */
async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    seen.push(e.reason);
  };
  globalThis.addEventListener("unhandledrejection", listener);
  try {
    await fn();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    globalThis.removeEventListener("unhandledrejection", listener);
  }
  return seen;
}

Deno.test("a profile cut by destroy whose dispatches alone are awaited leaves no unhandled rejection", async () => {
  const client = await createClient();
  const x = client.create(new Uint32Array(64));
  const token = await client.startProfile();
  client.launch(incKernel, [1], [x]);
  const duration = await client.endProfile(token);
  const unhandled = await unhandledDuring(async () => {
    client.destroy();
    await assert.rejects(() => duration.dispatches, DeviceLostError);
  });
  assert.deepEqual(unhandled, []);
  await assert.rejects(() => duration.ticks, DeviceLostError); // the other half still rejects when awaited
});
