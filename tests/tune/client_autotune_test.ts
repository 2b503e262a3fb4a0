/**
 * `client.autotune(set, input)`: the device's tuner, measured on the client's
 * stream and persisted in the `tuneCache` store the client was made with.
 */

import assert from "node:assert/strict";
import { AutotuneError, type ComputeClient, defineKernel, defineTunableSet, WorkerClient } from "../../mod.ts";
import type { Transport } from "../../mod.ts";
import { CLIENT_KINDS, clientTest, withClientOf } from "../_clients.ts";
import { defineLoopKernel, launchWithinBudget } from "../_loop_budget.ts";
import type { Handle } from "../../mod.ts";

/** x[i] += 1, once per invocation. */
const fast = defineKernel({
  name: "autotune-fast",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&x)) { x[g.x] += 1u; } }`,
});

/**
 * x[i] += 1 after spinning `n` (info word) iterations: the same result, much slower. The loop's result is used (the
 * add grows by one only if it ends at 1, which 20,000 steps of it never do: they end at 2,859,008,672), so no shader
 * compiler may drop the loop; with `acc * 0u` Mesa's GL path dropped it, and "slow" won the tuning now and then.
 */
const slow = defineLoopKernel({
  name: "autotune-slow",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var acc = 0u;
  for (var i = 0u; i < n; i++) { acc = acc * 1664525u + 1013904223u; }
  if (g.x < arrayLength(&x)) { x[g.x] += 1u + select(0u, 1u, acc == 1u); }
}`,
}, ({ info }) => info[0]!);

/** Assigns a float to a u32: fails to compile. */
const broken = defineKernel({
  name: "autotune-broken",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 1.5; }`,
});

function incrementSet(client: ComputeClient<Transport>, runs: string[]) {
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

for (const elements of [256, 1 << 18]) {
  clientTest(
    `client.autotune gives three identical candidates (${elements} elements) to the earliest, measuring them in turn`,
    async (client) => {
      const set = defineTunableSet({
        name: `identical-${elements}`,
        key: (x: Handle) => x.sizeInUse,
        candidates: ["first", "second", "third"].map((name) => ({
          name,
          run: (x: Handle) => client.launch(fast, [Math.ceil(elements / 64)], [x]), // the same work: the same kernel
        })),
      });
      using x = client.create(new Uint32Array(elements));
      await client.autotune(set, x);
      const tuner = client instanceof WorkerClient ? client.device.tuner : (client as ComputeClient).server.tuner;
      const d = tuner.decision(set, x)!;
      // Every one is measured in turn: at least the 5 rounds before any elimination, none failed. Elimination is a
      // rank test at p <= 1%, repeated each round from the fifth on; on a loaded CPU (wall-clock samples of a tiny
      // kernel on the software adapter) it now and then drops one of identical candidates (once in CI, once in ten
      // runs beside two busy loops). The earliest candidate left then wins.
      const records = JSON.stringify(d.results);
      for (const r of d.results) {
        assert.ok(r.status === "measured" || r.status === "eliminated", records);
        assert.ok((r.samples ?? 0) >= 5, records);
      }
      assert.equal(d.winner, d.results.find((r) => r.status === "measured")!.name, records);
      assert.ok(d.results.filter((r) => r.status === "measured").length >= 2, records);
    },
    { tuneCache: "memory" },
  );
}

for (const kind of CLIENT_KINDS) {
  Deno.test(`client.autotune writes its decision and its dropped candidates to the client's logger sink [${kind}]`, async () => {
    const file = await Deno.makeTempFile({ suffix: ".log" });
    try {
      await withClientOf(kind, async (client) => {
        const set = incrementSet(client, []);
        using x = client.create(new Uint32Array(256));
        await client.autotune(set, x);
      }, { tuneCache: "memory", logger: { autotune: "basic", sink: { file } } });
      const lines = (await Deno.readTextFile(file)).split("\n").filter((l) => l.startsWith("[denogpu autotune]"));
      assert.ok(lines.some((l) => /dropped "broken": CompilationError/.test(l)), lines.join("\n"));
      assert.ok(lines.some((l) => /autotune "increment" 1024: "fast" .*after \d+ rounds/.test(l)), lines.join("\n"));
    } finally {
      await Deno.remove(file);
    }
  });
}

/** Compiles, but its pipeline fails validation on the device: the override has no value. */
const unvalidated = defineKernel({
  name: "autotune-unvalidated",
  wgsl: `override missing: u32;
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = missing; }`,
});

/** The client still works: a launch and a read after the failed autotune. */
async function stillUsable(client: ComputeClient<Transport>, x: Handle): Promise<void> {
  client.launch(fast, [1], [x]);
  assert.deepEqual([...(await client.read(x, Uint32Array)).slice(0, 2)], [1, 1]);
}

clientTest(
  "client.autotune gives AutotuneError naming every candidate and why when none works, and the client stays usable",
  async (client) => {
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
        { name: "unvalidated", run: (x: Handle) => client.launch(unvalidated, [1], [x]) },
      ],
    });
    using x = client.create(new Uint32Array(4));
    await assert.rejects(client.autotune(set, x), (e: unknown) => {
      assert.ok(e instanceof AutotuneError, String(e));
      assert.deepEqual(e.failures.map((f) => f.candidate), ["throws", "broken", "unvalidated"]);
      assert.match(e.failures[0]!.reason, /Error: no/);
      assert.match(e.failures[1]!.reason, /CompilationError: .*autotune-broken/);
      assert.match(e.failures[2]!.reason, /CompilationError: .*autotune-unvalidated/);
      return true;
    });
    await stillUsable(client, x);
  },
  { tuneCache: "memory" },
);

for (const [what, kernel] of [["fails to compile", broken], ["fails pipeline validation", unvalidated]] as const) {
  clientTest(
    `client.autotune rejects a set whose only candidate ${what} with AutotuneError, and the client stays usable`,
    async (client) => {
      const set = defineTunableSet({
        name: `only-${kernel.name}`,
        key: () => 0,
        candidates: [{ name: "only", run: (x: Handle) => client.launch(kernel, [1], [x]) }],
      });
      using x = client.create(new Uint32Array(4));
      await assert.rejects(client.autotune(set, x), (e: unknown) => {
        assert.ok(e instanceof AutotuneError, String(e));
        assert.deepEqual(e.failures.map((f) => f.candidate), ["only"]);
        assert.match(e.failures[0]!.reason, new RegExp(`CompilationError: .*${kernel.name}`));
        return true;
      });
      await stillUsable(client, x);
    },
    { tuneCache: "memory" },
  );
}

clientTest(
  "client.autotune runs a set's only working candidate, checked once, and its result is the call's",
  async (client) => {
    using copy = client.create(new Uint32Array(4));
    const set = defineTunableSet({
      name: "only-fast",
      key: () => 0,
      inputs: () => copy, // the check runs on the benchmark input
      candidates: [{ name: "only", run: (x: Handle) => client.launch(fast, [1], [x]) }],
    });
    using x = client.create(new Uint32Array(4));
    await client.autotune(set, x);
    await client.autotune(set, x);
    assert.deepEqual([...await client.read(x, Uint32Array)], [2, 2, 2, 2]);
    assert.deepEqual([...await client.read(copy, Uint32Array)], [1, 1, 1, 1]);
  },
  { tuneCache: "memory" },
);
