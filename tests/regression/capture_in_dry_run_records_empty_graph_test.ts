/**
 * Regression: launches inside a dry run only compile, so a capture whose
 * recorded run was dry recorded nothing. `client.dryRun(() => client.capture(fn))`
 * (and `client.capture(() => client.dryRun(fn))`) returned an empty graph
 * without error; its replays silently did nothing.
 *
 * A capture is now refused while a dry run is open (`graphPrepare` and
 * `beginCapture` throw `GraphStateError` naming the dry run, the stream's
 * capture state unchanged), and launches skipped by a dry run while recording
 * make `endCapture` fail.
 *
 * Found in review of `dryRun` against the capture lifecycle.
 */

import assert from "node:assert/strict";
import { GraphStateError, ServerUnhealthyError } from "../../mod.ts";
import { plusOneKernel as plusOne, readF32, withClient } from "../_gpu.ts";

/** True for a `GraphStateError` of `operation` that names the dry run. */
const dryRefusal = (operation: string) => (e: unknown): boolean =>
  e instanceof GraphStateError && e.operation === operation && /dry run/.test(e.message);

Deno.test("a capture inside a dry run is refused with a GraphStateError naming it, and works once the dry run ends", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const step = () => client.launch(plusOne, [1], [input, output]);
    await client.dryRun(async () => {
      await assert.rejects(() => client.capture(step), dryRefusal("graphPrepare"));
      assert.throws(() => client.graphPrepare(), dryRefusal("graphPrepare"));
    });
    assert.equal(client.server.stream(0).capture.state, "none", "the refused calls armed nothing");
    const graph = await client.capture(step);
    client.write(output, new Float32Array(4));
    graph.replay();
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
    graph.destroy();
  });
});

Deno.test("beginCapture inside a dry run is refused and leaves the stream prepared", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    client.graphPrepare();
    client.launch(plusOne, [1], [input, output]);
    await client.dryRun(() => assert.rejects(() => client.beginCapture(), dryRefusal("beginCapture")));
    assert.equal(client.server.stream(0).capture.state, "prepared");
    await client.beginCapture();
    client.launch(plusOne, [1], [input, output]);
    const graph = await client.endCapture();
    client.write(output, new Float32Array(4));
    graph.replay();
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
    graph.destroy();
  });
});

Deno.test("launches skipped by a dry run while recording make endCapture fail, and the stream stays usable", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const step = () => client.launch(plusOne, [1], [input, output]);
    await assert.rejects(
      () => client.capture(() => client.dryRun(step)),
      (e: unknown) =>
        e instanceof ServerUnhealthyError && e.errors.length === 1 && dryRefusal("launch")(e.errors[0]) &&
        /1 launch/.test(e.errors[0]!.message),
    );
    assert.equal(client.server.stream(0).capture.state, "none");
    assert.equal(client.server.graphCount, 0);
    await client.flush(); // reported once
    step();
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
  });
});
