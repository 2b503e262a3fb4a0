/**
 * Compaction through a client (issue 33.5): memory that pools move keeps its
 * bytes for everything that refers to it. Random sequences of creates,
 * releases, clones, views, launches (queued, on the memory's stream and on
 * another), writes, reads (awaited and deferred) and graph replays, on pools
 * that pack whenever they can, are checked byte for byte against a CPU model,
 * with both clients; a graph's memory stays where the graph recorded it; and a
 * steady loop creates no buffer after warm-up with compaction on.
 */

import assert from "node:assert/strict";
import type { ClientOptions, ComputeClient, Graph, Handle, MemoryConfiguration, Transport } from "../../mod.ts";
import { incKernel, readU32, rng, withClient } from "../_gpu.ts";
import { clientTest, inProcess } from "../_clients.ts";

/** Best-fit pages of 2 KiB that pack whenever they can (a negative slack), over a window of 10 reservations. */
const PACKING: MemoryConfiguration = {
  pools: [
    { kind: "exclusive", maxAllocSize: 0 },
    {
      kind: "sliced",
      pageSize: 2048,
      maxSliceSize: 2048,
      fit: "best",
      deallocPeriod: 10,
      compaction: { slack: -1, every: 1, budget: 2048 },
    },
    { kind: "exclusive", maxAllocSize: 1 << 22, deallocPeriod: 10 },
  ],
};
const OPTIONS: ClientOptions = { memory: PACKING, tasksMax: 64 };

/** Slices moved on streams 0 and 1. */
async function movesOf(client: ComputeClient<Transport>): Promise<number> {
  let n = 0;
  for (const s of [0, 1]) {
    const report = await client.onStream(s).memoryReport();
    for (const p of report.dynamic) n += p.compaction?.moves ?? 0;
  }
  return n;
}

interface Live {
  h: Handle;
  /** The allocation's words (shared by its clones and views). */
  words: Uint32Array;
  /** The view's first word and word count. */
  at: number;
  n: number;
}

clientTest(
  "random creates, releases, clones, views, launches, writes, reads and replays agree with a CPU model while pools move memory",
  async (client) => {
    const r = rng(33);
    const streams = [client, client.onStream(1)];
    const live: Live[] = [];
    const graphs: { graph: Graph; target: Live }[] = [];
    const deferred: Promise<void>[] = [];
    const expectLive = async (x: Live, what: string) => {
      const got = await readU32(client, x.h);
      assert.deepEqual([...got], [...x.words.subarray(x.at, x.at + x.n)], what);
    };
    for (let step = 0; step < 1200; step++) {
      const c = streams[r() < 0.7 ? 0 : 1]!;
      const op = r();
      if (op < 0.3 || live.length < 4) {
        const n = 1 + Math.floor(r() * (r() < 0.8 ? 128 : 500));
        const words = Uint32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32));
        live.push({ h: c.create(words), words, at: 0, n });
      } else if (op < 0.52) {
        const [x] = live.splice(Math.floor(r() * live.length), 1);
        x!.h.release();
      } else if (op < 0.57) {
        const x = live[Math.floor(r() * live.length)]!;
        live.push({ ...x, h: x.h.clone() });
      } else if (op < 0.62) {
        const x = live[Math.floor(r() * live.length)]!;
        // Views start 256 bytes apart, so that kernels may bind them (minStorageBufferOffsetAlignment).
        if (x.n < 65) continue;
        const skip = 64 * Math.floor(r() * Math.floor((x.n - 1) / 64));
        const trim = Math.floor(r() * (x.n - skip - 1));
        live.push({ h: x.h.view(4 * skip, 4 * trim), words: x.words, at: x.at + skip, n: x.n - skip - trim });
      } else if (op < 0.8) {
        // Queued, not submitted: a move after it must copy what it wrote.
        const x = live[Math.floor(r() * live.length)]!;
        c.launch(incKernel, [Math.ceil(x.n / 64)], [x.h]);
        for (let i = x.at; i < x.at + x.n; i++) x.words[i] = (x.words[i]! + 1) >>> 0;
      } else if (op < 0.85) {
        const x = live[Math.floor(r() * live.length)]!;
        const data = Uint32Array.from({ length: x.n }, () => Math.floor(r() * 2 ** 32));
        c.write(x.h, data);
        x.words.set(data, x.at);
      } else if (op < 0.92) {
        const x = live[Math.floor(r() * live.length)]!;
        const want = [...x.words.subarray(x.at, x.at + x.n)];
        const read = readU32(c, x.h).then((got) => assert.deepEqual([...got], want, `read at step ${step}`));
        if (r() < 0.5) await read;
        else deferred.push(read);
      } else if (op < 0.95 && graphs.length < 3) {
        // A graph pins the memory it binds: it must stay where the graph recorded it.
        const target = live[Math.floor(r() * live.length)]!;
        const graph = await client.capture(() => client.launch(incKernel, [Math.ceil(target.n / 64)], [target.h]));
        graphs.push({ graph, target: { ...target, h: target.h.clone() } });
        for (let i = target.at; i < target.at + target.n; i++) target.words[i] = (target.words[i]! + 1) >>> 0;
      } else if (op < 0.985 && graphs.length > 0) {
        const { graph, target } = graphs[Math.floor(r() * graphs.length)]!;
        graph.replay();
        for (let i = target.at; i < target.at + target.n; i++) target.words[i] = (target.words[i]! + 1) >>> 0;
      } else if (graphs.length > 0) {
        const [g] = graphs.splice(Math.floor(r() * graphs.length), 1);
        g!.graph.destroy();
        g!.target.h.release();
      }
    }
    await Promise.all(deferred);
    for (const [i, x] of live.entries()) await expectLive(x, `live handle ${i} at the end`);
    for (const { target } of graphs) await expectLive(target, "a graph's memory at the end");
    const moves = await movesOf(client);
    // Moves wait for idle pages, so how many happen depends on when the device finishes each batch (CI once saw 79
    // where other runs see more); the bound only proves the churn above exercised moving memory.
    assert.ok(moves > 40, `only ${moves} slices moved`);
    for (const g of graphs) {
      g.graph.destroy();
      g.target.h.release();
    }
    for (const x of live) x.h.release();
  },
  OPTIONS,
);

clientTest(
  "a launch after a move binds the memory's new place: the launch memo and the bind group cache follow the slice",
  async (client) => {
    const a = client.create(new Uint32Array(64));
    client.launch(incKernel, [1], [a]);
    await client.flush(); // the kernel's first launch is held until its pipeline is known: no move meanwhile
    client.launch(incKernel, [1], [a]); // queued; the pipeline's memo now holds a's slice
    const where = inProcess(client) ? a.memory.slice : null;
    // Fill a's page and the next; then a stands alone in its page, and the next has holes.
    const fillers = Array.from({ length: 15 }, () => client.create(new Uint32Array(64)));
    for (const f of fillers.slice(0, 9)) f.release();
    client.empty(4096).release(); // a reservation (of another pool): the packing pool moves a into a hole
    if (where !== null) assert.notEqual(a.memory.slice, where, "a moved");
    client.launch(incKernel, [1], [a]); // the same pipeline and handle: the memo must not give the old place
    assert.deepEqual([...await readU32(client, a)], new Array(64).fill(3));
    for (const f of fillers.slice(9)) assert.deepEqual([...await readU32(client, f)], new Array(64).fill(0));
    assert.ok(await movesOf(client) > 0);
    a.release();
    for (const f of fillers.slice(9)) f.release();
  },
  OPTIONS,
);

clientTest("a graph's memory stays where the graph recorded it while the pool packs around it", async (client) => {
  const r = rng(5);
  const x = client.create(new Uint32Array(100));
  const graph = await client.capture(() => client.launch(incKernel, [2], [x]));
  const where = inProcess(client) ? x.memory.slice : null;
  let kept: Handle[] = [];
  for (let round = 0; round < 30; round++) {
    // Fill pages, release most of what was filled: the pool empties its sparsest pages into the others.
    for (let i = 0; i < 12; i++) kept.push(client.create(new Uint32Array(1 + Math.floor(r() * 400))));
    kept = kept.filter((h) => {
      if (r() < 0.7) return true;
      h.release();
      return false;
    });
    graph.replay();
  }
  if (where !== null) assert.equal(x.memory.slice, where, "the graph's memory did not move");
  assert.deepEqual([...await readU32(client, x)], new Array(100).fill(31));
  assert.ok(await movesOf(client) > 10, "the pool did move other memory");
  graph.destroy();
  x.release();
  for (const h of kept) h.release();
}, OPTIONS);

/** Records the labels of the buffers `createBuffer` creates on a device until `stop()`. */
function recordBuffers(device: GPUDevice): { labels: string[]; stop: () => void } {
  const labels: string[] = [];
  const original = device.createBuffer;
  device.createBuffer = function (this: GPUDevice, d: GPUBufferDescriptor) {
    labels.push(d.label ?? "");
    return original.call(this, d);
  };
  return { labels, stop: () => (device.createBuffer = original) };
}

// createBuffer is counted on the device of a main-thread client.
Deno.test(
  "with compaction on, a steady loop of allocations, launches and releases creates no buffer after warm-up",
  () =>
    withClient(async (client) => {
      const layout: MemoryConfiguration = {
        pools: [
          { kind: "exclusive", maxAllocSize: 0 },
          {
            kind: "sliced",
            pageSize: 1 << 20,
            maxSliceSize: 64 << 10,
            fit: "best",
            deallocPeriod: 200,
            compaction: true,
          },
          {
            kind: "sliced",
            pageSize: 2 << 20,
            maxSliceSize: 1 << 20,
            fit: "best",
            deallocPeriod: 200,
            compaction: true,
          },
          { kind: "exclusive", maxAllocSize: 1 << 26, deallocPeriod: 5000 },
        ],
      };
      client.installMemoryPools(layout);
      const r = rng(7);
      // A training-like round: activations kept through a forward pass, released in a backward pass that makes a
      // gradient of each, then small optimizer temporaries: the activations' pages stand empty longer than the window.
      const sizes = Array.from({ length: 60 }, () => 4 * (1024 + Math.floor(r() * 60_000)));
      const small = Array.from({ length: 200 }, () => 4 * (256 + Math.floor(r() * 8000)));
      const round = async () => {
        const kept = sizes.map((s) => {
          const h = client.empty(s);
          client.launch(incKernel, [Math.min(64, Math.ceil(s / 256))], [h]);
          return h;
        });
        for (let i = kept.length - 1; i >= 0; i--) {
          const grad = client.empty(sizes[i]!);
          client.launch(incKernel, [1], [grad]);
          kept[i]!.release();
          grad.release();
        }
        for (const s of small) client.empty(s).release();
        await client.sync();
      };
      for (let i = 0; i < 8; i++) await round();
      const made = recordBuffers(client.server.device);
      try {
        for (let i = 0; i < 6; i++) await round();
      } finally {
        made.stop();
      }
      assert.deepEqual(made.labels.filter((l) => !l.includes(" readback ")), [], "no buffer after warm-up");
      const back = client.memoryReport().dynamic.reduce((n, p) => n + (p.compaction?.pagesGivenBack ?? 0), 0);
      assert.ok(back > 0, "the pools did compact (gave pages back)");
    }),
);
