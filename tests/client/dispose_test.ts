/**
 * The client is disposable, like handles and graphs: `using` destroys it at
 * the end of the scope, `await using` first waits for the work it queued.
 */

import assert from "node:assert/strict";
import { createClient, defineKernel, ServerUnhealthyError } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";

/** Assigns a float to a u32: fails to compile at its first launch. */
const broken = defineKernel({
  name: "broken-for-dispose",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 1.5; }`,
});

Deno.test("`using client` destroys the client and its device at the end of the scope", async () => {
  let device: GPUDevice;
  {
    using client = await createClient();
    device = client.server.device;
    client.launch(incKernel, [1], [client.create(new Uint32Array(4))]);
    assert.equal(client.server.closed, false);
  }
  const lost = await device.lost;
  assert.equal(lost.reason, "destroyed");
});

Deno.test("`await using client` waits for the queued work, then destroys the device", async () => {
  const events: string[] = [];
  let server: { closed: boolean } | null = null;
  {
    await using client = await createClient();
    server = client.server;
    const sync = client.sync.bind(client);
    client.sync = async () => {
      events.push(`sync (closed: ${client.server.closed})`);
      await sync();
      events.push("synced");
    };
    const x = client.create(new Uint32Array(64));
    for (let i = 0; i < 10; i++) client.launch(incKernel, [1], [x]);
  }
  assert.deepEqual(events, ["sync (closed: false)", "synced"]);
  assert.equal(server!.closed, true);
});

Deno.test("`await using` raises errors the queued work left, and still destroys the device", async () => {
  let server: { closed: boolean } | null = null;
  await assert.rejects(
    async () => {
      await using client = await createClient();
      server = client.server;
      client.launch(broken, [1], [client.create(new Uint32Array(1))]);
    },
    (e: unknown) => e instanceof ServerUnhealthyError,
  );
  assert.equal(server!.closed, true);
});

Deno.test("disposing a client already destroyed in its scope is a no-op", async () => {
  {
    await using client = await createClient();
    client.destroy();
  }
  {
    using client = await createClient();
    client.destroy();
  }
});
