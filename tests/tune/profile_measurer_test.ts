/**
 * Contract under test: `profileMeasurer` on a real client (llvmpipe here).
 * A round measures every run with one device wait; a run that throws, or
 * whose kernel fails to compile, gets a failure and the others are still
 * measured; a tuner over it picks the faster kernel. The system-timing path
 * is checked against a fake client.
 */

import assert from "node:assert/strict";
import { CompilationError, type ComputeClient, createClient, defineKernel } from "../../mod.ts";
import { defineTunableSet } from "../../mod.ts";
import { profileMeasurer, type ProfilingClient, Tuner } from "../../tune.ts";
import { defineLoopKernel, launchWithinBudget } from "../_loop_budget.ts";

/** Spins `iterations` (info word 0) times per invocation. */
const spin = defineLoopKernel({
  name: "tune-spin",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> iterations: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var acc = g.x;
  for (var i = 0u; i < iterations; i++) { acc = acc * 1664525u + 1013904223u; }
  out[g.x] = acc;
}`,
}, ({ info }) => info[0]!);

/** Does not compile: a float stored into a u32 array. */
const broken = defineKernel({
  name: "tune-broken",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { out[0] = 1.5; }`,
});

async function withClient(fn: (client: ComputeClient) => Promise<void>): Promise<void> {
  const client = await createClient();
  try {
    await fn(client);
  } finally {
    client.destroy();
  }
}

/**
 * Counts how many separate waves `mapAsync` calls came in: calls made within
 * one event-loop task are one wave, and a device wait (awaiting a map before
 * the next) puts the calls after it in a later task. Tasks are counted by a
 * message that re-posts itself, so the count does not depend on how long a
 * (blocking) `mapAsync` call takes on a loaded machine, as a clock gap did.
 */
function countMaps(): { waves: () => number; restore: () => void } {
  const original = GPUBuffer.prototype.mapAsync;
  let task = 0;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    task++;
    channel.port2.postMessage(0);
  };
  channel.port2.postMessage(0);
  const tasks: number[] = [];
  GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
    tasks.push(task);
    return original.apply(this, args);
  };
  return {
    waves: () => new Set(tasks).size,
    restore: () => {
      GPUBuffer.prototype.mapAsync = original;
      channel.port1.close();
      channel.port2.close();
    },
  };
}

Deno.test("a round of 8 runs is measured with one device wait, each run getting its own dispatches' time", async () => {
  await withClient(async (client) => {
    const out = client.empty(64 * 4 * 4);
    const run = (n: number, launches = 1) => () => {
      for (let i = 0; i < launches; i++) launchWithinBudget(client, spin, [4], [out], new Uint32Array([n]));
    };
    const measurer = profileMeasurer(client);
    assert.equal(measurer.method, "device");
    const runs = [run(50), run(2000), run(50, 3), run(2000), run(50), run(50), run(50), run(2000)];
    await measurer.round(runs); // compiles
    const maps = countMaps();
    let outcomes;
    try {
      outcomes = await measurer.round(runs);
    } finally {
      maps.restore();
    }
    assert.equal(maps.waves(), 1);
    const nanos = outcomes.map((o) => o.kind === "sample" ? o.nanos : NaN);
    assert.ok(nanos.every((t) => t > 0), JSON.stringify(outcomes));
    // The work differs 40-fold; compare medians, not single samples (a round's first dispatch can carry a
    // warm-up on a busy software adapter).
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    const long = median([nanos[1]!, nanos[3]!, nanos[7]!]);
    const short = median([nanos[0]!, nanos[4]!, nanos[5]!, nanos[6]!]);
    assert.ok(long > short, `spin 2000 measures longer than 50: ${nanos}`);
  });
});

Deno.test("a run that throws or whose kernel fails to compile is a failure, and the other runs are still measured", async () => {
  await withClient(async (client) => {
    const out = client.empty(64 * 4 * 4);
    const good = () => launchWithinBudget(client, spin, [4], [out], new Uint32Array([100]));
    const outcomes = await profileMeasurer(client).round([
      good,
      () => client.launch(broken, [1], [out]),
      () => {
        throw new TypeError("bad arguments");
      },
      () => {}, // dispatches nothing
      good,
    ]);
    assert.deepEqual(outcomes.map((o) => o.kind), ["sample", "failure", "failure", "unmeasured", "sample"]);
    const compile = outcomes[1]!.kind === "failure" ? outcomes[1]!.error : null;
    assert.ok(compile instanceof CompilationError && compile.kernel === "tune-broken", String(compile));
    await client.flush(); // behaviour 19: nothing is left queued
  });
});

Deno.test("an abort during a round rejects with its reason and leaves no profile open", async () => {
  await withClient(async (client) => {
    const out = client.empty(64 * 4 * 4);
    const good = () => launchWithinBudget(client, spin, [4], [out], new Uint32Array([100]));
    const controller = new AbortController();
    const reason = new Error("stop");
    await assert.rejects(
      profileMeasurer(client).round([good, () => controller.abort(reason), good], { signal: controller.signal }),
      (e) => e === reason,
    );
    const p = await client.profile(good);
    assert.equal(p.dispatches.length, 1);
  });
});

Deno.test("a tuner over a client picks the faster kernel and then runs only it", async () => {
  await withClient(async (client) => {
    const out = client.empty(64 * 4 * 4);
    const launched: string[] = [];
    const candidate = (name: string, n: number) => ({
      name,
      run: () => {
        launched.push(name);
        launchWithinBudget(client, spin, [4], [out], new Uint32Array([n]));
        return name;
      },
    });
    const set = defineTunableSet({
      name: "spin",
      key: (x: number) => x,
      candidates: [
        candidate("slow", 3000),
        { name: "broken", run: () => client.launch(broken, [1], [out]) },
        candidate(
          "fast",
          300,
        ),
      ],
    });
    const tuner = new Tuner({ measurer: profileMeasurer(client), log: () => {} });
    assert.equal(await tuner.tune(set, 1), "fast");
    const d = tuner.decision(set, 1)!;
    assert.equal(d.results[1]!.status, "failed");
    assert.match(d.results[1]!.reason!, /CompilationError/);
    launched.length = 0;
    await tuner.tune(set, 1);
    assert.deepEqual(launched, ["fast"]);
    await client.flush();
  });
});

Deno.test("system timing: each run is timed between syncs less an empty sync, and a sync error fails its run", async () => {
  let queued: Error | null = null;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const fake: ProfilingClient<number> = {
    properties: { timingMethod: "system" },
    exclusive: (fn) => Promise.resolve().then(fn),
    startProfile: () => Promise.reject(new Error("unused")),
    endProfile: () => Promise.reject(new Error("unused")),
    flush: () => Promise.resolve(),
    sync: async () => {
      await sleep(5);
      const e = queued;
      queued = null;
      if (e !== null) throw e;
    },
  };
  const measurer = profileMeasurer(fake);
  assert.equal(measurer.method, "system");
  const outcomes = await measurer.round([
    () => sleep(60),
    () => void (queued = new Error("device error")),
    () => sleep(10),
  ]);
  assert.equal(outcomes[1]!.kind, "failure");
  const [a, c] = [outcomes[0]!, outcomes[2]!];
  assert.ok(a.kind === "sample" && c.kind === "sample");
  assert.ok(a.nanos > c.nanos && a.nanos >= 40e6, `${a.nanos} vs ${c.nanos}`);
});
