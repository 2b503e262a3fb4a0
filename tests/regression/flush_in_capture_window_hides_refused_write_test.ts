/**
 * Regression: a write inside a capture window queues a `GraphStateError` on
 * the stream, and the README says it "makes `endCapture` fail". But a `flush`
 * inside the window drained that error like any other (contract 2.17: a
 * drain returns everything queued), and `endCapture` then stored a graph
 * that silently lacked the write. The same held for a replay refused inside
 * the window, and for a read completing inside it.
 *
 * The recording now remembers what it refused: a drain inside the window
 * still reports the error, as the contract's drains do, and `endCapture`
 * fails with it whether or not something drained it first.
 *
 * Found by the graph-capture audit.
 */

import assert from "node:assert/strict";
import { GraphStateError, ServerUnhealthyError } from "../../mod.ts";
import { plusOneKernel as plusOne, readF32, withClient } from "../_gpu.ts";

/** A predicate for a `ServerUnhealthyError` holding exactly one `GraphStateError` of `operation`. */
const refused = (operation: string) => (e: unknown): boolean =>
  e instanceof ServerUnhealthyError && e.errors.length === 1 && e.errors[0] instanceof GraphStateError &&
  e.errors[0].operation === operation;

Deno.test("a write refused inside a capture window makes endCapture fail even after a flush reported it", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    client.graphPrepare();
    client.launch(plusOne, [1], [input, output]);
    await client.beginCapture();
    client.launch(plusOne, [1], [input, output]);
    client.write(input, new Float32Array([9, 9, 9, 9]));
    await assert.rejects(() => client.flush(), refused("write"), "a drain reports it, as every drain does");
    await assert.rejects(() => client.endCapture(), refused("write"));
    await client.flush(); // nothing is left queued
    assert.equal(client.server.graphCount, 0, "no graph was stored");
    client.launch(plusOne, [1], [input, output]);
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5], "the stream works normally afterwards");
  });
});

Deno.test("a write refused inside a capture window and not drained fails endCapture once", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    client.graphPrepare();
    await client.beginCapture();
    client.launch(plusOne, [1], [input, output]);
    client.write(input, new Float32Array([9, 9, 9, 9]));
    await assert.rejects(() => client.endCapture(), refused("write"));
    await client.flush();
  });
});

Deno.test("a replay refused inside a capture window makes endCapture fail even after a flush reported it", async () => {
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const graph = await client.capture(() => client.launch(plusOne, [1], [input, output]));
    client.graphPrepare();
    await client.beginCapture();
    graph.replay();
    await assert.rejects(() => client.flush(), refused("replay"));
    await assert.rejects(() => client.endCapture(), refused("replay"));
    graph.replay();
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5], "the first graph still replays");
    graph.destroy();
  });
});
