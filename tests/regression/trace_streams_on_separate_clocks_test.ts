/**
 * Found by auditing traces across streams: each stream's profiler counted
 * device time from its own first timestamp, so dispatches of two streams
 * (which `chromeTrace` draws as one track per stream) were on different time
 * axes. A profile on stream 1 run 50 ms after one on stream 0 started at 0
 * too, drawn over stream 0's dispatches instead of after them. All streams of
 * a server now count from one origin.
 */

import assert from "node:assert/strict";
import { chromeTrace } from "../../src/profile/trace.ts";
import { incKernel, withClient } from "../_gpu.ts";

Deno.test("dispatches of profiles on two streams share one time axis in a trace", async () => {
  await withClient(async (client) => {
    const other = client.onStream(1);
    const x = client.create(new Uint32Array(64));
    const y = other.create(new Uint32Array(64));
    const first = await client.profile(() => {
      for (let i = 0; i < 3; i++) client.launch(incKernel, [1], [x]);
    });
    await client.sync();
    await new Promise((r) => setTimeout(r, 50));
    const second = await other.profile(() => {
      for (let i = 0; i < 3; i++) other.launch(incKernel, [1], [y]);
    });
    const lastOfFirst = Math.max(...first.dispatches.map((d) => d.end));
    const firstOfSecond = Math.min(...second.dispatches.map((d) => d.start));
    assert.ok(
      firstOfSecond >= lastOfFirst,
      `stream 1 ran after stream 0 but starts at ${firstOfSecond} ns, before stream 0's end at ${lastOfFirst} ns`,
    );
    const events = chromeTrace([...first.dispatches, ...second.dispatches]).traceEvents.filter((e) => e.ph === "X");
    assert.deepEqual(events.map((e) => e.tid), [0, 0, 0, 1, 1, 1]);
    for (let i = 1; i < events.length; i++) assert.ok(events[i]!.ts >= events[i - 1]!.ts, "in the order they ran");
  });
});
