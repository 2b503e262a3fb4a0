/**
 * Contract under test: profiling (section 6 of the contract). Device timing
 * timestamps every pass while a profile is open, tokens nest, profiles span
 * submits, the per-dispatch breakdown becomes a Chrome trace; system timing is
 * the fallback; errors drained during a profile fail it; `exclusive` and
 * `profile` follow behaviour 20. Also the logger.
 */

import assert from "node:assert/strict";
import { chromeTrace, summarizeDispatches } from "../../src/profile/trace.ts";
import { CompilationError, defineKernel, ProfileError, ServerError, ServerUnhealthyError } from "../../mod.ts";
import { parseLogEnv } from "../../src/logger.ts";
import { incKernel, withClient } from "../_gpu.ts";
import { CLIENT_KINDS, clientTest, withClientOf } from "../_clients.ts";
import { defineLoopKernel, launchWithinBudget } from "../_loop_budget.ts";

/** Spins `iterations` (info word 0) times per invocation, then writes the result. */
const spin = defineLoopKernel({
  name: "spin",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> iterations: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var acc = g.x;
  for (var i = 0u; i < iterations; i++) { acc = acc * 1664525u + 1013904223u; }
  out[g.x] = acc;
}`,
}, ({ info }) => info[0]!);

clientTest("a kernel made 10x longer measures longer on the device", async (client) => {
  assert.equal(client.properties.timingMethod, "device");
  const out = client.empty(64 * 4 * 4);
  const run = (n: number) =>
    client.profile(() => {
      for (let i = 0; i < 4; i++) launchWithinBudget(client, spin, [4], [out], new Uint32Array([n]));
    });
  await run(10); // warm the pipeline
  const short = await run(2_000);
  const long = await run(20_000);
  assert.equal(short.duration.method, "device");
  assert.equal(short.dispatches.length, 4);
  assert.ok(short.nanos > 0);
  assert.ok(long.nanos > short.nanos, `long ${long.nanos} ns vs short ${short.nanos} ns`);
  assert.deepEqual(long.kernels.map((k) => [k.name, k.count]), [["spin", 4]]);
});

clientTest("profiles nest: an outer profile covers the inner one's dispatches and its own", async (client) => {
  const x = client.create(new Uint32Array(64));
  const outer = await client.startProfile();
  client.launch(incKernel, [1], [x]);
  const inner = await client.startProfile();
  client.launch(incKernel, [1], [x]);
  client.launch(incKernel, [1], [x]);
  const innerDuration = await client.endProfile(inner);
  client.launch(incKernel, [1], [x]);
  const outerDuration = await client.endProfile(outer);
  const [i, o] = await Promise.all([innerDuration.dispatches, outerDuration.dispatches]);
  assert.equal(i.length, 2);
  assert.equal(o.length, 4);
  const [it, ot] = await Promise.all([innerDuration.ticks, outerDuration.ticks]);
  assert.ok(ot.start <= it.start && it.end <= ot.end);
  await assert.rejects(
    () => client.endProfile(inner),
    (e: unknown) => e instanceof ProfileError && e.kind === "not-registered",
  );
  await assert.rejects(
    () => client.endProfile({ id: 987654, stream: 0 }),
    (e: unknown) => e instanceof ProfileError && e.kind === "not-registered",
  );
});

Deno.test("a profile spanning several submits counts every dispatch of all of them", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64));
    const submits: number[] = [];
    const queue = client.server.device.queue;
    const submit = queue.submit;
    queue.submit = function (this: GPUQueue, cbs: GPUCommandBuffer[]) {
      submits.push(1);
      return submit.call(this, cbs);
    };
    let p;
    try {
      p = await client.profile(async () => {
        for (let i = 0; i < 10; i++) client.launch(incKernel, [1], [x]);
        await client.flush();
        for (let i = 0; i < 10; i++) client.launch(incKernel, [1], [x]);
      });
    } finally {
      queue.submit = submit;
    }
    assert.ok(submits.length >= 5, `${submits.length} submits`);
    assert.equal(p.dispatches.length, 20);
    const sorted = [...p.dispatches].sort((a, b) => a.start - b.start);
    assert.equal(p.ticks.start, sorted[0]!.start);
    assert.equal(p.ticks.end, Math.max(...p.dispatches.map((d) => d.end)));
  }, { tasksMax: 4 });
});

clientTest("the Chrome trace of a profile is JSON with one event per dispatch", async (client) => {
  const x = client.create(new Uint32Array(64));
  const out = client.empty(64 * 4);
  const path = await Deno.makeTempFile({ suffix: ".trace.json" });
  try {
    const p = await client.profile(() => {
      for (let i = 0; i < 3; i++) client.launch(incKernel, [1], [x]);
      launchWithinBudget(client, spin, [1], [out], new Uint32Array([100]));
    }, { trace: path });
    const trace = JSON.parse(await Deno.readTextFile(path));
    const events = trace.traceEvents.filter((e: { ph: string }) => e.ph === "X");
    assert.equal(events.length, 4);
    assert.deepEqual(events.map((e: { name: string }) => e.name), ["inc", "inc", "inc", "spin"]);
    assert.ok(events.every((e: { dur: number; ts: number }) => e.dur >= 0 && Number.isFinite(e.ts)));
    assert.deepEqual(summarizeDispatches(p.dispatches).map((k) => k.count).sort(), [1, 3]);
    assert.equal(chromeTrace([]).traceEvents.length, 1);
  } finally {
    await Deno.remove(path);
  }
});

clientTest("an error drained while a profile is open fails that profile", async (client) => {
  const broken = defineKernel({
    name: "broken",
    wgsl: "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }",
  });
  await assert.rejects(
    () => client.profile(() => client.launch(broken, [1], [])),
    (e: unknown) => e instanceof ProfileError && e.kind === "unknown" && /broken/.test(e.message),
  );
  const ok = await client.profile(() => 123);
  assert.equal(ok.result, 123);
});

clientTest(
  "exclusive() turns a throw into a ServerError; profile() re-raises it; both return values",
  async (client) => {
    await assert.rejects(
      () =>
        client.exclusive(() => {
          throw new Error("x marks the spot");
        }),
      (e: unknown) => e instanceof ServerError && /x marks the spot/.test(e.message),
    );
    await assert.rejects(
      () =>
        client.profile(() => {
          throw new Error("y");
        }),
      (e: unknown) => e instanceof Error && !(e instanceof ServerError) && e.message === "y",
    );
    const p = await client.profile(() => 123);
    assert.equal(p.result, 123);
    assert.equal(p.nanos, 0, "no device work, zero duration");
    // exclusive sections run one at a time, and nested calls do not deadlock.
    const order: string[] = [];
    await Promise.all([
      client.exclusive(async () => {
        order.push("a1");
        await client.exclusive(() => order.push("nested"));
        await new Promise((r) => setTimeout(r, 5));
        order.push("a2");
      }),
      client.exclusive(() => order.push("b")),
    ]);
    assert.deepEqual(order, ["a1", "nested", "a2", "b"]);
  },
);

clientTest("system timing measures with the host clock when asked for", async (client) => {
  const out = client.empty(64 * 4);
  const p = await client.profile(() => launchWithinBudget(client, spin, [1], [out], new Uint32Array([1000])));
  assert.equal(p.duration.method, "system");
  assert.ok(p.nanos > 0);
  assert.deepEqual(p.dispatches, []);
}, { timing: "system" });

for (const kind of CLIENT_KINDS) {
  Deno.test(`the logger writes compilation and launch lines to a file, and a profile summary at sync [${kind}]`, async () => {
    const file = await Deno.makeTempFile({ suffix: ".log" });
    try {
      await withClientOf(kind, async (client) => {
        const x = client.create(new Uint32Array(64));
        client.launch(incKernel, [1], [x]);
        client.launch(incKernel, [1], [x]);
        await client.sync();
      }, { logger: { compilation: "basic", launches: "full", profiling: "basic", sink: { file, append: false } } });
      const log = await Deno.readTextFile(file);
      assert.match(log, /\[denogpu compilation\] compiled inc/);
      assert.equal(log.match(/executing inc/g)?.length, 2);
      assert.match(log, /\[denogpu profile\] profile summary/);
      assert.match(log, /inc\s+[\d.]+ ms\s+2×/);
    } finally {
      await Deno.remove(file);
    }
  });
}

Deno.test("parseLogEnv() reads DENOGPU_LOG's levels and sink", () => {
  assert.deepEqual(parseLogEnv(undefined), {});
  assert.deepEqual(parseLogEnv("0"), {});
  assert.deepEqual(parseLogEnv("memory=full,file=/tmp/x.log"), {
    memory: "full",
    sink: { file: "/tmp/x.log", append: true },
  });
  assert.deepEqual(parseLogEnv("1"), {
    compilation: "basic",
    memory: "basic",
    launches: "basic",
    profiling: "basic",
    autotune: "basic",
  });
  assert.deepEqual(parseLogEnv("profiling=medium,stdout"), { profiling: "medium", sink: "stdout" });
});

/** A kernel that fails to compile (a float assigned to a u32). */
const broken = defineKernel({ name: "broken", wgsl: "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }" });

Deno.test("endProfile with an ended token keeps the stream's queued errors for the next flush", async (t) => {
  for (
    const [kind, timing] of CLIENT_KINDS.flatMap((k) => (["device", "system"] as const).map((t) => [k, t] as const))
  ) {
    await t.step(`${kind} client, ${timing} timing`, async () => {
      await withClientOf(kind, async (client) => {
        const token = await client.startProfile();
        await client.endProfile(token);
        client.launch(broken, [1], []);
        await assert.rejects(
          client.endProfile(token),
          (e: unknown) => e instanceof ProfileError && e.kind === "not-registered",
        );
        await assert.rejects(
          client.flush(),
          (e: unknown) => e instanceof ServerUnhealthyError && e.errors.some((x) => x instanceof CompilationError),
          "the compilation error surfaces at the next flush",
        );
        await client.flush(); // drained: the stream is healthy again
      }, { timing });
    });
  }
});

Deno.test("profile(fn) whose fn throws keeps the stream's queued errors for the next flush", async (t) => {
  for (
    const [kind, timing] of CLIENT_KINDS.flatMap((k) => (["device", "system"] as const).map((t) => [k, t] as const))
  ) {
    await t.step(`${kind} client, ${timing} timing`, async () => {
      await withClientOf(kind, async (client) => {
        const thrown = new Error("the work threw");
        await assert.rejects(
          client.profile(() => {
            client.launch(broken, [1], []);
            throw thrown;
          }),
          (e: unknown) => e === thrown,
        );
        await assert.rejects(
          client.flush(),
          (e: unknown) => e instanceof ServerUnhealthyError && e.errors.some((x) => x instanceof CompilationError),
          "the compilation error surfaces at the next flush",
        );
        const ok = await client.profile(() => {}); // no profile was left open
        assert.equal(ok.dispatches.length, 0);
      }, { timing });
    });
  }
});

clientTest("profile() with a trace that is not a path or URL is refused before fn runs", async (client) => {
  let ran = false;
  await assert.rejects(
    client.profile(() => {
      ran = true;
    }, { trace: 42 as unknown as string }),
    TypeError,
  );
  assert.equal(ran, false);
  assert.equal((await client.profile(() => 7)).result, 7, "the client is still usable");
});
