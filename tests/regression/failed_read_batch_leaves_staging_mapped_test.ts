/**
 * Regression: a read batch that failed after its staging buffers were mapped
 * gave back none of the buffers it had not reached yet. When the device was
 * lost between the mapping and the read-back, `StreamReader.#run` rejected
 * every read from the first failing `unmap()` on, and returned, leaving that
 * buffer and every later one of the batch mapped, out of the pool and never
 * destroyed. When the client was destroyed on a caller's device (which stays
 * alive) in the same window, the reads rejected with `DeviceLostError` but the
 * batch went on and put its buffers back into the staging pool of the
 * destroyed stream, which nothing empties any more: device memory on the
 * caller's device held by a dead client.
 *
 * Every failure path of a batch now destroys each staging buffer it still
 * holds; a buffer goes back to its pool only on success.
 *
 * Found by reading `StreamReader.#run` (src/stream/stream_reader.ts).
 */

import assert from "node:assert/strict";
import { type ComputeClient, createClient, DeviceLostError } from "../../mod.ts";

/** What became of the buffers mapped for reading while `fn` ran. */
interface StagingLog {
  /** Buffers mapped for reading. */
  mapped: Set<GPUBuffer>;
  /** Buffers unmapped without an error. */
  unmapped: Set<GPUBuffer>;
  /** Buffers destroyed. */
  destroyed: Set<GPUBuffer>;
}

/**
 * Runs `fn` with `GPUBuffer`'s map, unmap and destroy watched; `onMapped`
 * runs once, when every read mapping requested so far has resolved (a batch
 * requests all of its maps before any resolves).
 */
async function watchStaging(onMapped: () => void, fn: () => Promise<void>): Promise<StagingLog> {
  const log: StagingLog = { mapped: new Set(), unmapped: new Set(), destroyed: new Set() };
  const proto = GPUBuffer.prototype;
  const { mapAsync, unmap, destroy } = proto;
  let requested = 0;
  let resolved = 0;
  proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
    if (args[0] === GPUMapMode.READ) log.mapped.add(this);
    requested++;
    return mapAsync.apply(this, args).then((v) => {
      if (++resolved === requested) onMapped();
      return v;
    });
  };
  proto.unmap = function (this: GPUBuffer) {
    unmap.call(this);
    log.unmapped.add(this);
  };
  proto.destroy = function (this: GPUBuffer) {
    destroy.call(this);
    log.destroyed.add(this);
  };
  try {
    await fn();
    // The batch may still be running after its reads rejected: give it a moment.
    for (let i = 0; i < 100 && [...log.mapped].some((b) => !log.destroyed.has(b)); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    Object.assign(proto, { mapAsync, unmap, destroy });
  }
  return log;
}

/**
 * Three reads in one tick, of 60, 200 and 200 KiB: one batch, with several
 * staging buffers (a batch packs its reads into the buffers it took while
 * they fit); every one must reject with `DeviceLostError`.
 */
async function readThree(client: ComputeClient): Promise<void> {
  const handles = [15, 50, 50].map((k) => client.create(new Uint32Array(k * 1024).fill(k)));
  await client.sync();
  const outcomes = await Promise.allSettled(handles.map((h) => client.read(h)));
  for (const o of outcomes) {
    assert.ok(o.status === "rejected" && o.reason instanceof DeviceLostError, `a read settled with ${String(o)}`);
  }
}

Deno.test("a read batch failing after a device loss destroys every staging buffer it mapped", async () => {
  const client = await createClient();
  try {
    const log = await watchStaging(() => client.server.device.destroy(), () => readThree(client));
    assert.ok(log.mapped.size >= 2, `${log.mapped.size} staging buffers in the batch`);
    // After a loss `unmap()` throws; destroying is the one way back for a mapped buffer.
    const kept = [...log.mapped].filter((b) => !log.destroyed.has(b) && !log.unmapped.has(b)).map((b) => b.label);
    assert.deepEqual(kept, [], "staging buffers left mapped and never destroyed");
  } finally {
    client.destroy();
  }
});

Deno.test("a read batch failing because its client was destroyed on a caller's device destroys its staging buffers", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  assert.ok(adapter);
  const device = await adapter.requestDevice();
  try {
    const client = await createClient({ device });
    const log = await watchStaging(() => client.destroy(), () => readThree(client));
    assert.ok(log.mapped.size >= 2, `${log.mapped.size} staging buffers in the batch`);
    // Unmapped and parked in the destroyed stream's pool is not given back: nothing would ever destroy them.
    const kept = [...log.mapped].filter((b) => !log.destroyed.has(b)).map((b) => b.label);
    assert.deepEqual(kept, [], "staging buffers still alive on the caller's device");
    // The caller's device is still usable.
    const b = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ });
    await b.mapAsync(GPUMapMode.READ);
    b.destroy();
  } finally {
    device.destroy();
  }
});
