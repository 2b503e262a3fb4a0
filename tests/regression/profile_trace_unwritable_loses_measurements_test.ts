/**
 * Regression: `profile(fn, { trace })` with a trace path that cannot be
 * written ran `fn`, measured it, then rejected with Deno's own error
 * (`NotFound: No such file or directory`), which names neither the call nor
 * the trace. What `fn` returned and the measurements were lost, though `fn`
 * had run and its device work had been done. It now rejects with a
 * `TraceWriteError` (a `ProfileError` of kind `trace`) that names the path,
 * keeps Deno's error as its cause, and carries the whole `ProfileResult`.
 *
 * Found by reading `profileSection` (src/client/_sections.ts).
 */

import assert from "node:assert/strict";
import { ProfileError, type ProfileResult, TraceWriteError } from "../../mod.ts";
import { incKernel, readU32, rng, withClient } from "../_gpu.ts";

for (const timing of ["device", "system"] as const) {
  Deno.test(`profile() with an unwritable trace path rejects with a TraceWriteError carrying fn's result and the measurements (${timing} timing)`, async () => {
    await withClient(async (client) => {
      const random = rng(7);
      const start = Uint32Array.from({ length: 256 }, () => Math.floor(random() * 1e6));
      const x = client.create(start);
      const dir = await Deno.makeTempDir();
      const path = `${dir}/missing/profile.trace.json`; // its directory does not exist
      let runs = 0;
      let thrown: unknown = null;
      try {
        await client.profile(async () => {
          runs++;
          for (let i = 0; i < 3; i++) client.launch(incKernel, [4], [x]);
          return await readU32(client, x);
        }, { trace: path });
      } catch (e) {
        thrown = e;
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
      assert.equal(runs, 1);
      assert.ok(thrown instanceof ProfileError, `expected a ProfileError, got ${String(thrown)}`);
      assert.ok(thrown instanceof TraceWriteError);
      assert.equal(thrown.kind, "trace");
      assert.equal(thrown.path, path);
      assert.ok(thrown.message.includes(path), thrown.message);
      assert.ok(thrown.cause instanceof Deno.errors.NotFound, `cause: ${String(thrown.cause)}`);
      // The measurement is not lost: fn's result, checked against the CPU, and the timings.
      const p = thrown.profile as ProfileResult<Uint32Array>;
      assert.deepEqual([...p.result], [...start].map((v) => v + 3));
      assert.equal(p.nanos, p.ticks.end - p.ticks.start);
      assert.ok(p.nanos >= 0);
      if (timing === "device" && client.properties.features.timestampQuery) {
        assert.equal(p.dispatches.length, 3);
        assert.deepEqual(p.kernels.map((k) => [k.name, k.count]), [["inc", 3]]);
      }
      // The client is usable, and the next profile is not affected.
      const again = await client.profile(() => 5);
      assert.equal(again.result, 5);
      assert.deepEqual([...await readU32(client, x)], [...start].map((v) => v + 3));
    }, { timing });
  });
}

Deno.test("profile() with a trace URL that cannot be written names the URL in its TraceWriteError", async () => {
  await withClient(async (client) => {
    const dir = await Deno.makeTempDir();
    const url = new URL(`file://${dir}/missing/profile.trace.json`);
    try {
      await assert.rejects(client.profile(() => "done", { trace: url }), (e: unknown) => {
        assert.ok(e instanceof TraceWriteError, String(e));
        assert.equal(e.path, url.href);
        assert.ok(e.message.includes(url.href), e.message);
        assert.equal((e.profile as ProfileResult<string>).result, "done");
        return true;
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
