/**
 * `createCount` / `emptyCount`: indirect workgroup counts from pages that hold
 * counts only, written by the host or by a kernel, counted in memory reports.
 * Counts in plain handles (`create`, `empty`, views) in the page of the
 * launch's own bindings: copied in the open pass, in order with the kernels
 * around them, in held work, graphs, profiles and across streams.
 */

import assert from "node:assert/strict";
import {
  type ClientOptions,
  type ComputeClient,
  defineKernel,
  type Handle,
  ResourceLimitError,
  type Transport,
} from "../../mod.ts";
import { addConstKernel, incKernel, withClient } from "../_gpu.ts";
import { clientTest, inProcess, serverStats } from "../_clients.ts";

/** Writes [n / 64 rounded up, 1, 1] into a count: the workgroups to cover n items. */
const sizeCount = defineKernel({
  name: "size-count",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> count: array<u32, 3>;
@group(0) @binding(1) var<storage, read> n: u32;
@compute @workgroup_size(1) fn main() { count[0] = (n + 63u) / 64u; count[1] = 1u; count[2] = 1u; }`,
});

clientTest("createCount holds [x, y, z] and an indirect launch runs that many workgroups", async (client) => {
  {
    using count = client.createCount(2);
    assert.equal(count.sizeInUse, 12);
    assert.deepEqual([...await client.read(count, Uint32Array)], [2, 1, 1]);
    using x = client.create(new Uint32Array(256));
    client.launch(incKernel, count, [x]);
    const got = await client.read(x, Uint32Array);
    assert.deepEqual([...got.slice(0, 128)], new Array(128).fill(1));
    assert.deepEqual([...got.slice(128)], new Array(128).fill(0));
  }
});

clientTest(
  "a kernel writes an emptyCount through its own storage binding, and a later launch dispatches from it",
  async (client) => {
    {
      using count = client.emptyCount();
      using x = client.create(new Uint32Array(256));
      client.launch(sizeCount, [1], [count], new Uint32Array([130])); // 3 workgroups
      client.launch(incKernel, count, [x]);
      const got = await client.read(x, Uint32Array);
      assert.equal(got.filter((v) => v === 1).length, 192);
    }
  },
);

Deno.test("counts live on pages of their own, reported apart, and a released count's slot is reused", async () => {
  await withClient((client) => {
    const x = client.create(new Uint32Array(64));
    const a = client.createCount();
    const b = client.createCount();
    const page = (h: typeof a) => h.memory.slice!.page;
    assert.notEqual(page(a), page(x));
    assert.equal(page(a), page(b));
    const report = client.memoryReport();
    assert.equal(report.counts.usage.numberAllocs, 2);
    assert.equal(report.counts.pages, 1);
    const slot = a.memory.slice!.offset;
    a.release();
    const c = client.createCount();
    assert.equal(c.memory.slice!.offset, slot);
    assert.equal(client.memoryReport().counts.usage.numberAllocs, 2);
    assert.equal(client.memoryUsage().numberAllocs, 3);
    for (const h of [b, c, x]) h.release();
  });
});

clientTest("createCount refuses counts that are not u32 integers", (client) => {
  assert.throws(() => client.createCount(-1), /createCount: x must be an integer in \[0, 2\^32\), got -1/);
  assert.throws(() => client.createCount(1, 1.5), /createCount: y must be/);
  assert.throws(() => client.createCount(1, 1, 2 ** 32), /createCount: z must be/);
});

clientTest("a count allocation comes from the count pool, reported apart from storage", async (client) => {
  using x = client.create(new Uint32Array(64));
  using a = client.createCount();
  const report = await client.memoryReport();
  assert.equal(report.counts.usage.numberAllocs, 1);
  assert.equal(report.counts.pages, 1);
  assert.equal((await client.memoryUsage()).numberAllocs, 2);
  assert.ok(x.sizeInUse > 0 && a.sizeInUse === 12);
});

clientTest(
  "createCount and write refuse a count above maxComputeWorkgroupsPerDimension, which WebGPU would skip without an error",
  async (client) => {
    const max = client.properties.hardware.maxCubeCount[0];
    assert.throws(() => client.createCount(max + 1), (e: unknown) => {
      assert.ok(e instanceof ResourceLimitError, String(e));
      assert.equal(e.limit, "cube-count");
      assert.deepEqual([...e.requested], [max + 1, 1, 1]);
      assert.match(e.message, /createCount.*maxComputeWorkgroupsPerDimension/);
      return true;
    });
    const count = client.createCount(2);
    assert.throws(() => client.write(count, new Uint32Array([1, max + 5, 1])), ResourceLimitError);
    client.write(count, new Uint32Array([max, 1, 1])); // at the limit is fine
    assert.deepEqual([...await client.read(count, Uint32Array)], [max, 1, 1]);
    // Ordinary memory holding the same words is not a count: writing it is not checked.
    const plain = client.create(new Uint32Array(3));
    client.write(plain, new Uint32Array([max + 1, 1, 1]));
  },
);

// Counts in plain handles: a count in the page of the launch's own bindings is
// copied, in the open pass, by a dispatch of its own right before the launch
// (WebGPU forbids dispatching from a buffer the dispatch also binds writably).

/** Adds 1 to out[w] for each workgroup w of the dispatch, numbered x fastest. */
const tally = defineKernel({
  name: "tally",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = w.x + nw.x * (w.y + nw.y * w.z);
  out[i] = out[i] + 1u;
}`,
});

/** Writes the info words [x, y, z] into a count through a storage binding. */
const setCount = defineKernel({
  name: "set-count",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> count: array<u32, 3>;
@group(0) @binding(1) var<storage, read> xyz: array<u32, 3>;
@compute @workgroup_size(1) fn main() { count[0] = xyz[0]; count[1] = xyz[1]; count[2] = xyz[2]; }`,
});

/** The CPU reference of `tally` launched with each of `counts` in turn, over `n` words. */
function tallies(n: number, ...counts: [number, number, number][]): number[] {
  const out = new Array(n).fill(0);
  for (const [x, y, z] of counts) for (let i = 0; i < x * y * z; i++) out[i]++;
  return out;
}

/** Compute passes begun so far by the client's server. */
const passes = async (client: ComputeClient<Transport>) => (await serverStats(client)).passesBegun;

/** Checks, for the main-thread client, that two handles live in one pool page (a worker's are placed alike). */
function assertSamePage(client: ComputeClient<Transport>, a: Handle, b: Handle): void {
  if (inProcess(client)) assert.equal(a.memory.slice!.page, b.memory.slice!.page, "one page");
}

clientTest(
  "a count in a plain handle sharing the bindings' page dispatches the stored counts, without breaking the pass",
  async (client) => {
    using out = client.create(new Uint32Array(16));
    using counts = client.create(new Uint32Array([4, 2, 1]));
    assertSamePage(client, out, counts);
    client.launch(tally, counts, [out]); // compiled and validated: nothing is held below
    await client.sync();
    client.write(out, new Uint32Array(16));
    const before = await passes(client);
    for (let i = 0; i < 10; i++) client.launch(tally, counts, [out]);
    assert.ok((await passes(client)) - before <= 1, `${(await passes(client)) - before} passes for 10 launches`);
    assert.deepEqual([...await client.read(out, Uint32Array)], tallies(16, ...Array(10).fill([4, 2, 1])));
  },
);

clientTest(
  "a count written by a kernel earlier in the same pass, in the same page, is the count the indirect launch uses",
  async (client) => {
    using out = client.create(new Uint32Array(16));
    using counts = client.create(new Uint32Array(3));
    assertSamePage(client, out, counts);
    client.launch(setCount, [1], [counts], new Uint32Array([1, 1, 1]));
    client.launch(tally, counts, [out]);
    await client.sync();
    client.write(out, new Uint32Array(16));
    const before = await passes(client);
    client.launch(setCount, [1], [counts], new Uint32Array([3, 1, 1]));
    client.launch(tally, counts, [out]);
    client.launch(setCount, [1], [counts], new Uint32Array([2, 3, 1]));
    client.launch(tally, counts, [out]);
    client.launch(tally, counts, [out]);
    assert.ok((await passes(client)) - before <= 1, "one pass");
    assert.deepEqual([...await client.read(out, Uint32Array)], tallies(16, [3, 1, 1], [2, 3, 1], [2, 3, 1]));
  },
);

/** Adds 1 to words[3 + w] for each workgroup w, and workgroup 0 adds 1 to words[0]: the count it was dispatched from. */
const bump = defineKernel({
  name: "bump",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> words: array<u32>;
@group(0) @binding(1) var<storage, read_write> other: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3u) {
  words[3u + w.x] = words[3u + w.x] + 1u;
  if (w.x == 0u) { words[0] = words[0] + 1u; other[0] = other[0] + 1u; }
}`,
});

for (const alternate of [false, true]) {
  clientTest(
    `a launch that changes its own count makes the next launch from it copy the new count (${
      alternate ? "bindings resolved each launch" : "the pipeline's memo of its bindings"
    })`,
    async (client) => {
      using words = client.create(new Uint32Array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]));
      using count = words.view(0, 28);
      const others = [client.create(new Uint32Array(1)), client.create(new Uint32Array(1))];
      client.launch(bump, count, [words, others[0]!]);
      await client.sync();
      client.write(words, new Uint32Array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]));
      const before = await passes(client);
      for (let i = 0; i < 4; i++) client.launch(bump, count, [words, others[alternate ? i % 2 : 0]!]);
      assert.ok((await passes(client)) - before <= 1, "one pass");
      // Launch k dispatches k workgroups: word 3 + j counts the launches with k > j.
      assert.deepEqual([...await client.read(words, Uint32Array)], [5, 1, 1, 4, 3, 2, 1, 0, 0, 0]);
      for (const o of others) o.release();
    },
  );
}

/** Adds 1 to out[info] per workgroup; binds `page` writably, so that a count in it must be copied. */
const tallyAt = defineKernel({
  name: "tally-at",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> page: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> at: u32;
@compute @workgroup_size(1) fn main() {
  if (page[0] == 0u) { page[0] = 0u; }
  atomicAdd(&out[at], 1u);
}`,
});

const layouts: [string, ClientOptions][] = [
  ["pool pages", {}],
  ["a buffer per allocation", { memory: { pools: [{ kind: "direct" }] } }],
];
for (const [label, options] of layouts) {
  clientTest(
    `views of a plain handle at every word offset, to its last 12 bytes, dispatch the counts stored there (${label})`,
    async (client) => {
      const words = Uint32Array.from({ length: 40 }, (_, j) => (j * 7) % 5 + 1);
      using page = client.create(words);
      using out = client.create(new Uint32Array(38));
      const views = Array.from({ length: 38 }, (_, i) => page.view(4 * i));
      client.launch(tallyAt, views[0]!, [page, out], new Uint32Array([0]));
      await client.sync();
      client.write(out, new Uint32Array(38));
      const before = await passes(client);
      views.forEach((view, i) => client.launch(tallyAt, view, [page, out], new Uint32Array([i])));
      assert.ok((await passes(client)) - before <= 1, "one pass");
      const want = Array.from({ length: 38 }, (_, i) => words[i]! * words[i + 1]! * words[i + 2]!);
      assert.deepEqual([...await client.read(out, Uint32Array)], want);
      for (const v of views) v.release();
    },
    options,
  );
}

clientTest(
  "1,000 launches from a shared-page count in one batch all dispatch it, in one pass",
  async (client) => {
    using out = client.create(new Uint32Array(8));
    using counts = client.create(new Uint32Array([2, 1, 1]));
    client.launch(tally, counts, [out]);
    await client.sync();
    client.write(out, new Uint32Array(8));
    const before = await passes(client);
    for (let i = 0; i < 1000; i++) client.launch(tally, counts, [out]);
    assert.ok((await passes(client)) - before <= 1, "one pass");
    assert.deepEqual([...await client.read(out, Uint32Array)], [1000, 1000, 0, 0, 0, 0, 0, 0]);
  },
  { tasksMax: 4096 },
);

clientTest(
  "a captured launch from a shared-page count replays in one pass with the count current at each replay",
  async (client) => {
    using out = client.create(new Uint32Array(8));
    using counts = client.create(new Uint32Array([2, 1, 1]));
    assertSamePage(client, out, counts);
    const graph = await client.capture(() => {
      client.launch(tally, [1], [out]);
      client.launch(tally, counts, [out]);
      client.launch(tally, counts, [out]);
    });
    client.write(out, new Uint32Array(8));
    const before = await passes(client);
    graph.replay();
    graph.replay();
    graph.replay();
    assert.ok((await passes(client)) - before <= 1, "one pass");
    client.write(counts, new Uint32Array([3, 2, 1]));
    graph.replay();
    const want = tallies(8, ...Array(3).fill([1, 1, 1]), ...Array(6).fill([2, 1, 1]), [1, 1, 1], [3, 2, 1], [3, 2, 1]);
    assert.deepEqual([...await client.read(out, Uint32Array)], want);
    graph.destroy();
  },
);

clientTest(
  "a launch after a replay that rewrote its count copies the count again, in the same pass",
  async (client) => {
    using out = client.create(new Uint32Array(8));
    using counts = client.create(new Uint32Array([1, 1, 1]));
    const graph = await client.capture(() => client.launch(setCount, [1], [counts], new Uint32Array([3, 1, 1])));
    client.launch(tally, counts, [out]);
    await client.sync();
    client.write(out, new Uint32Array(8));
    client.write(counts, new Uint32Array([1, 1, 1]));
    const before = await passes(client);
    client.launch(tally, counts, [out]);
    graph.replay();
    client.launch(tally, counts, [out]);
    assert.ok((await passes(client)) - before <= 1, "one pass");
    assert.deepEqual([...await client.read(out, Uint32Array)], tallies(8, [1, 1, 1], [3, 1, 1]));
    graph.destroy();
  },
);

clientTest("a profiled launch from a shared-page count runs, and the profile names only its kernel", async (client) => {
  using out = client.create(new Uint32Array(8));
  using counts = client.create(new Uint32Array([3, 1, 1]));
  client.launch(tally, counts, [out]);
  await client.sync();
  client.write(out, new Uint32Array(8));
  const profile = await client.profile(() => {
    for (let i = 0; i < 4; i++) client.launch(tally, counts, [out]);
  });
  assert.deepEqual(profile.kernels.map((k) => [k.name, k.count]), [["tally", 4]]);
  assert.deepEqual([...await client.read(out, Uint32Array)], tallies(8, ...Array(4).fill([3, 1, 1])));
});

clientTest(
  "launches from a shared-page count held behind a new kernel copy their counts when released, in order with a held write",
  async (client) => {
    using out = client.create(new Uint32Array(8));
    using counts = client.create(new Uint32Array([2, 1, 1, 3, 1, 1]));
    using first = counts.view(0, 12);
    using second = counts.view(12);
    using z = client.create(new Uint32Array(4));
    client.launch(tally, first, [out]);
    client.launch(tally, second, [out]);
    await client.sync();
    client.write(out, new Uint32Array(8));
    client.launch(addConstKernel(71), [1], [z]); // a new pipeline: the stream holds what follows
    client.launch(tally, first, [out]); // two held copies, from two words of the page
    client.launch(tally, second, [out]);
    client.write(first, new Uint32Array([4, 1, 1])); // held too: the release submits before it
    client.launch(tally, first, [out]);
    const want = tallies(8, [2, 1, 1], [3, 1, 1], [4, 1, 1]);
    assert.deepEqual([...await client.read(out, Uint32Array)], want);
    assert.deepEqual([...await client.read(z, Uint32Array)], [71, 71, 71, 71]);
  },
);

clientTest(
  "a count in another stream's memory, in the page of a binding from that stream, is copied too",
  async (client) => {
    const other = client.onStream(1);
    using out = other.create(new Uint32Array(8));
    using counts = other.create(new Uint32Array([2, 2, 1]));
    assertSamePage(client, out, counts);
    client.launch(tally, counts, [out]);
    client.launch(tally, counts, [out]);
    assert.deepEqual([...await other.read(out, Uint32Array)], tallies(8, [2, 2, 1], [2, 2, 1]));
  },
);

// The stream's indirect count buffer has a few slots: a copied count stays in its slot while every launch after it
// leaves its bytes alone, so launches alternating between a few counts copy each once per pass.

clientTest(
  "launches alternating between ten counts in the bindings' page each dispatch their own count, in one pass",
  async (client) => {
    const want: [number, number, number][] = Array.from({ length: 10 }, (_, i) => [1 + i % 3, 1 + (i >> 2), 1]);
    using words = client.create(new Uint32Array(want.flat()));
    using out = client.create(new Uint32Array(16));
    assertSamePage(client, out, words);
    const counts = want.map((_, i) => words.view(12 * i, 12 * (9 - i))); // 12 bytes each
    client.launch(tally, counts[0]!, [out]);
    await client.sync();
    client.write(out, new Uint32Array(16));
    const before = await passes(client);
    const order = [0, 1, 0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 9, 1, 8, 2, 7, 0, 1, 0, 1];
    for (const i of order) client.launch(tally, counts[i]!, [out]);
    assert.ok((await passes(client)) - before <= 1, "one pass");
    assert.deepEqual([...await client.read(out, Uint32Array)], tallies(16, ...order.map((i) => want[i]!)));
    for (const c of counts) c.release();
  },
);

clientTest(
  "a launch that rewrites a count its slot took over from another count makes the next launch from it copy it again",
  async (client) => {
    const init = new Uint32Array(3 * 64); // counts 256 bytes apart: any device can bind each alone
    [1, 2, 3].forEach((x, i) => init.set([x, 1, 1], 64 * i));
    using words = client.create(init);
    using out = client.create(new Uint32Array(8));
    assertSamePage(client, out, words);
    const [c0, c1, c2] = [0, 1, 2].map((i) => words.view(256 * i, 256 * (3 - i) - 12)); // 12 bytes each
    client.launch(tally, c0!, [out]); // compiled and validated: nothing is held below
    client.launch(setCount, c1!, [c1!], new Uint32Array([2, 1, 1]));
    await client.sync();
    client.write(out, new Uint32Array(8));
    const before = await passes(client);
    client.launch(tally, c0!, [out]); // c0 is copied into the first slot
    client.launch(setCount, c1!, [c2!], new Uint32Array([4, 1, 1])); // c2 -> [4, 1, 1]; c0's slot checked against c2's bytes
    client.launch(tally, [1, 1, 1], [out]); // a static count: every slot is forgotten
    client.launch(tally, c2!, [out]); // c2 is copied into the first slot
    client.launch(setCount, c1!, [c2!], new Uint32Array([5, 1, 1])); // c2 -> [5, 1, 1], while the first slot holds it
    client.launch(tally, c2!, [out]); // must copy c2 again
    assert.ok((await passes(client)) - before <= 1, "one pass");
    const want = tallies(8, [1, 1, 1], [1, 1, 1], [4, 1, 1], [5, 1, 1]);
    assert.deepEqual([...await client.read(out, Uint32Array)], want);
    for (const c of [c0, c1, c2]) c!.release();
  },
);

/**
 * A random program of launches over counts kept 256 bytes apart in one page, checked against a CPU model. There are
 * more counts (11) than a stream has count slots (8), so slots are taken over by other counts.
 */
async function countsProgram(client: ComputeClient<Transport>, seed: number, captured = false): Promise<void> {
  let s = seed;
  const rand = (n: number) => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) % n;
  const n = 11;
  const model = Array.from({ length: n }, () => [1 + rand(3), 1 + rand(2), 1]);
  const init = new Uint32Array(64 * n);
  model.forEach((c, i) => init.set(c, 64 * i));
  using words = client.create(init);
  using out = client.create(new Uint32Array(16));
  assertSamePage(client, out, words);
  const counts = model.map((_, i) => words.view(256 * i, 256 * (n - i) - 12)); // 12 bytes each
  const ran: number[][] = [];
  const program: (() => void)[] = [];
  for (let step = 0; step < 64; step++) {
    const op = rand(8);
    const i = rand(n);
    if (op < 5) {
      // An indirect tally from count i: binds `out` only, in the counts' page, so every count survives it.
      ran.push([...model[i]!]);
      program.push(() => client.launch(tally, counts[i]!, [out]));
    } else if (op < 7) {
      // Count i's launch rewrites count j through a storage binding of j's 12 bytes: only j changes.
      const j = rand(n);
      const xyz = [1 + rand(3), 1 + rand(2), 1];
      model[j] = xyz;
      program.push(() => client.launch(setCount, counts[i]!, [counts[j]!], new Uint32Array(xyz)));
    } else {
      ran.push([2, 1, 1]); // a static count between them
      program.push(() => client.launch(tally, [2, 1, 1], [out]));
    }
  }
  client.launch(tally, counts[0]!, [out]); // compiled and validated: nothing is held below
  client.launch(setCount, counts[0]!, [counts[0]!], new Uint32Array([1, 1, 1]));
  await client.sync();
  client.write(words, init); // the model started from `init`
  client.write(out, new Uint32Array(16));
  const want = tallies(16, ...ran as [number, number, number][]);
  if (!captured) {
    const before = await passes(client);
    for (const p of program) p();
    assert.ok((await passes(client)) - before <= 1, "one pass");
    assert.deepEqual([...await client.read(out, Uint32Array)], want, `seed ${seed}`);
  } else {
    // Captured, then replayed from the initial counts twice: each replay follows the model from the start.
    const graph = await client.capture(() => program.forEach((p) => p()));
    for (let r = 0; r < 2; r++) {
      client.write(words, init);
      client.write(out, new Uint32Array(16));
      graph.replay();
      assert.deepEqual([...await client.read(out, Uint32Array)], want, `seed ${seed}, replay ${r}`);
    }
    graph.destroy();
  }
  for (const c of counts) c.release();
}

clientTest(
  "random programs of launches that read counts and rewrite them through bindings dispatch what a CPU model predicts",
  async (client) => {
    for (const seed of [1, 2, 3, 4, 5, 6]) await countsProgram(client, seed);
  },
);

clientTest(
  "the same random programs, captured and replayed, dispatch what the CPU model predicts at every replay",
  async (client) => {
    for (const seed of [1, 2, 3, 4, 5, 6]) await countsProgram(client, seed, true);
  },
);
