/**
 * Found by reading `DrainingCalls.endProfile` (src/server/draining_calls.ts):
 * it looked the token's stream up with `server.stream()`, which builds a
 * stream on first use. An unknown token naming a stream that was never used
 * built that stream (its memory manager, info arena and profiler) before it
 * was refused, and a token naming an invalid stream (`-1`, a string) threw a
 * `RangeError` from the stream lookup instead of the contract's
 * `ProfileError` (`not-registered`, section 2.15).
 */

import assert from "node:assert/strict";
import { ProfileError } from "../../mod.ts";
import type { ProfilingToken } from "../../server.ts";
import { withClient } from "../_gpu.ts";

const notRegistered = (e: unknown) => e instanceof ProfileError && e.kind === "not-registered";

Deno.test("endProfile with an unknown token naming an unused stream is not-registered and builds no stream", async () => {
  await withClient(async (client) => {
    client.create(new Uint32Array(4));
    assert.deepEqual(client.server.streamIds(), [0]);
    await assert.rejects(client.endProfile({ id: 987654, stream: 77 }), notRegistered);
    assert.deepEqual(client.server.streamIds(), [0], "no stream was built for the token");
  });
});

Deno.test("endProfile with a token naming an invalid stream is not-registered", async () => {
  await withClient(async (client) => {
    for (const stream of [-1, 1.5, "x", null]) {
      const token = { id: 987654, stream } as unknown as ProfilingToken;
      await assert.rejects(client.endProfile(token), notRegistered, `stream ${String(stream)}`);
    }
    const token = await client.startProfile();
    await client.endProfile(token); // the client is still usable
  });
});

Deno.test("endProfile through another stream than the token's is not-registered, and the profile can still be ended on its own", async () => {
  await withClient(async (client) => {
    const other = client.onStream(1);
    other.create(new Uint32Array(4)); // stream 1 exists
    const token = await client.startProfile();
    await assert.rejects(other.endProfile(token), (e: unknown) => {
      assert.ok(notRegistered(e), String(e));
      assert.match((e as Error).message, /opened on stream 0.*ended on stream 1/);
      return true;
    });
    const d = await client.endProfile(token); // still open on stream 0 (contract 6: tokens live in their stream's profiler)
    const ticks = await d.ticks;
    assert.ok(ticks.end >= ticks.start);
  });
});
