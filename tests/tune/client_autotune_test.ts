/**
 * `client.autotune(set, input)`: the device's tuner, measured on the client's
 * stream and persisted in the `tuneCache` store the client was made with.
 */

import assert from "node:assert/strict";
import {
  AutotuneError,
  type ComputeClient,
  createClient,
  defineKernel,
  defineTunableSet,
  WorkerClient,
} from "../../mod.ts";
import type { AnyClient } from "../../server.ts";
import { clientTest } from "../_clients.ts";
import { defineLoopKernel, launchWithinBudget } from "../_loop_budget.ts";
import type { Handle } from "../../mod.ts";

/** x[i] += 1, once per invocation. */
const fast = defineKernel({
  name: "autotune-fast",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&x)) { x[g.x] += 1u; } }`,
});

/** x[i] += 1 after spinning `n` (info word) iterations: the same result, much slower. */
const slow = defineLoopKernel({
  name: "autotune-slow",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var acc = 0u;
  for (var i = 0u; i < n; i++) { acc = acc * 1664525u + 1013904223u; }
  if (g.x < arrayLength(&x)) { x[g.x] += 1u + acc * 0u; }
}`,
}, ({ info }) => info[0]!);

/** Assigns a float to a u32: fails to compile. */
const broken = defineKernel({
  name: "autotune-broken",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 1.5; }`,
});

function incrementSet(client: AnyClient, runs: string[]) {
  return defineTunableSet({
    name: "increment",
    key: (x: Handle) => x.sizeInUse,
    candidates: [
      {
        name: "slow",
        run: (x: Handle) => {
          runs.push("slow");
          launchWithinBudget(client, slow, [4], [x], new Uint32Array([20000]));
        },
      },
      { name: "broken", run: (x: Handle) => void (runs.push("broken"), client.launch(broken, [1], [x])) },
      { name: "fast", run: (x: Handle) => void (runs.push("fast"), client.launch(fast, [4], [x])) },
    ],
  });
}

clientTest(
  "client.autotune picks the fastest working candidate over a slower and a broken one, then runs only it",
  async (client) => {
    const runs: string[] = [];
    const set = incrementSet(client, runs);
    using x = client.create(new Uint32Array(256));
    await client.autotune(set, x);
    const tuner = client instanceof WorkerClient ? client.device.tuner : (client as ComputeClient).server.tuner;
    const d = tuner.decision(set, x)!;
    assert.equal(d.winner, "fast");
    assert.ok(runs.includes("slow") && runs.includes("broken"));
    runs.length = 0;
    const before = (await client.read(x, Uint32Array))[0]!;
    await client.autotune(set, x);
    assert.deepEqual(runs, ["fast"]);
    assert.equal((await client.read(x, Uint32Array))[0], before + 1);
  },
  { tuneCache: "memory" },
);

Deno.test("client.autotune gives AutotuneError naming every candidate when none works", async () => {
  await using client = await createClient({ tuneCache: "memory" });
  const set = defineTunableSet({
    name: "nothing-works",
    key: () => 0,
    candidates: [
      {
        name: "throws",
        run: () => {
          throw new Error("no");
        },
      },
      { name: "broken", run: (x: Handle) => client.launch(broken, [1], [x]) },
    ],
  });
  using x = client.create(new Uint32Array(4));
  await assert.rejects(client.autotune(set, x), (e: unknown) => {
    assert.ok(e instanceof AutotuneError);
    assert.deepEqual(e.failures.map((f) => f.candidate), ["throws", "broken"]);
    return true;
  });
});
