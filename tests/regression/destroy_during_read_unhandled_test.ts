/**
 * Regression: destroying the client while a read is completing must not leave
 * an unhandled rejection behind (Deno terminates a program on one).
 *
 * Found by the soak test: a read on one stream rejected, the test's cleanup
 * destroyed the client, and a read still completing on another stream threw
 * `OperationError: Parent device is lost` out of `StreamReader.#run`
 * (`staging.buffer.unmap()`, src/stream/stream_reader.ts, after `mapAsync`
 * had resolved and during or after `await stream.errors.settle()`). `#run` is started
 * by `queueMicrotask(() => this.#run())` and nobody handles its promise, so
 * the error becomes an unhandled rejection; the reader's own promise is
 * rejected only because `read` is guarded by the loss. `getMappedRange` can
 * throw the same way.
 *
 * The window exists on the spec path only: an early-mapped read (fast reads)
 * is copied out while Deno's `mapAsync` polls, before its promise settles, so
 * the first test pins `fastReads: false` (CI runs this file with fast reads on
 * too, where the read would rightly resolve with its bytes).
 */

import assert from "node:assert/strict";
import { defineKernel, DeviceLostError, ServerUnhealthyError } from "../../mod.ts";
import { withClient } from "../_gpu.ts";

/** Collects unhandled rejections while `fn` runs (and a little after), instead of failing the module. */
async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const onUnhandled = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    seen.push(e.reason);
  };
  globalThis.addEventListener("unhandledrejection", onUnhandled);
  try {
    await fn();
    await new Promise((r) => setTimeout(r, 200)); // let the reader's task finish
  } finally {
    globalThis.removeEventListener("unhandledrejection", onUnhandled);
  }
  return seen;
}

const describe = (errors: unknown[]) => errors.map((e) => (e instanceof Error ? e.stack ?? e.message : String(e)));

Deno.test("destroy() right after a read's staging buffer is mapped: the read rejects, nothing is left unhandled", async () => {
  let outcome: unknown = "pending";
  const unhandled = await unhandledDuring(async () => {
    await withClient(async (client) => {
      const x = client.create(new Uint32Array(64).fill(7));
      await client.sync();
      const proto = GPUBuffer.prototype;
      const mapAsync = proto.mapAsync;
      // Another task destroys the client in the window between the mapping and the reader using it.
      proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
        return mapAsync.apply(this, args).then((v) => {
          client.destroy();
          return v;
        });
      };
      try {
        await client.read(x);
        outcome = "resolved";
      } catch (e) {
        outcome = e;
      } finally {
        proto.mapAsync = mapAsync;
      }
    }, { fastReads: false });
  });
  assert.ok(outcome instanceof DeviceLostError, `the read settled with ${String(outcome)}`);
  assert.deepEqual(describe(unhandled), []);
});

Deno.test("a failed read on one stream, destroy() in the catch, and another stream's read completing", async () => {
  const broken = defineKernel({
    name: "regression-broken-for-destroy",
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 0.5; }`,
  });
  const inc = defineKernel({
    name: "regression-inc-for-destroy",
    wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] += 1u; }`,
  });
  let outcome: unknown = "pending";
  const unhandled = await unhandledDuring(async () => {
    await withClient(async (client) => {
      const a = client.onStream(1);
      const b = client.onStream(2);
      const xa = a.create(new Uint32Array(64));
      const xb = b.create(new Uint32Array(64));
      await Promise.all([a.sync(), b.sync()]);
      a.launch(broken, [1], [xa]); // a's read will reject
      for (let i = 0; i < 2000; i++) b.launch(inc, [1], [xb]); // b's read takes longer
      try {
        await Promise.all([a.read(xa), b.read(xb)]);
        outcome = "resolved";
      } catch (e) {
        outcome = e;
        client.destroy(); // shut down on the first failure
      }
    });
  });
  assert.ok(outcome instanceof ServerUnhealthyError, `the reads settled with ${String(outcome)}`);
  assert.deepEqual(describe(unhandled), []);
});
