/**
 * Compaction of best-fit sliced pools (issue 33.5), on a fake storage whose
 * buffers hold bytes and a fake mover that copies at once: a pool that holds
 * a page more than it needs empties its sparsest page into the others and
 * gives it back; a reservation that no free slice holds moves the fewest live
 * bytes to make room instead of making a page (only while the pool holds what
 * it needs); pinned memory, pages the stream may not use and a stream that
 * cannot move now stop moves; random sequences with moves forced often keep
 * every live allocation's bytes; and a steady loop still stops creating
 * buffers. The churn figures with compaction are in `churn_ratio_test.ts`.
 */

import assert from "node:assert/strict";
import type { ManagedMemory, Page, Slice } from "../../src/contract/managed_memory.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { formatMemoryReport } from "../../src/memory/memory_usage.ts";
import type { PoolConfig } from "../../src/contract/memory_types.ts";
import { ByteStorage, FakeMover, FakeStorage } from "../_fakes.ts";
import { rng } from "../_gpu.ts";
import { trainingLoop } from "./_churn.ts";

const A = 32;

/** A best-fit pool of 1 KiB pages (and an exclusive pool above 1 KiB, whose reservations only move the clock). */
function layout(compaction: PoolConfig & { kind: "sliced" } extends { compaction?: infer C } ? C : never, period = 10) {
  return [
    { kind: "sliced", pageSize: 1024, maxSliceSize: 1024, fit: "best", deallocPeriod: period, compaction },
    { kind: "exclusive", maxAllocSize: 1 << 20 },
  ] as PoolConfig[];
}

function manager(pools: PoolConfig[], storage = new ByteStorage(A)) {
  const mover = new FakeMover(storage);
  const mm = new MemoryManager(storage, { pools, label: "compaction" });
  mm.setMover(mover);
  return { mm, storage, mover };
}

/** Reservations of the exclusive pool: they advance the clock and leave the sliced pool alone. */
function tick(mm: MemoryManager, n: number): void {
  for (let i = 0; i < n; i++) mm.reserve(2000).drop();
}

function fill(storage: ByteStorage, d: ManagedMemory, seed: number): void {
  const b = storage.of(d.slice!);
  for (let i = 0; i < b.length; i++) b[i] = (seed * 31 + i * 7) & 255;
}

function expectBytes(storage: ByteStorage, d: ManagedMemory, seed: number, what: string): void {
  const b = storage.of(d.slice!);
  for (let i = 0; i < b.length; i++) {
    if (b[i] !== ((seed * 31 + i * 7) & 255)) assert.fail(`${what}: byte ${i} is ${b[i]}`);
  }
}

const slicedPages = (mm: MemoryManager) => mm.report().dynamic[0]!.pages;

Deno.test("a pool that holds a page more than it needs empties its sparsest page into the others and gives it back", () => {
  const { mm, storage, mover } = manager(layout({ slack: 0, every: 1 }));
  const d = Array.from({ length: 16 }, (_, i) => {
    const m = mm.reserve(256);
    fill(storage, m, i);
    return m;
  });
  const page = (i: number) => d[i]!.slice!.page;
  assert.equal(slicedPages(mm), 4);
  // Page 0 keeps one slice (index 1), page 1 keeps two: 11 of 16 live, the pool needs three pages.
  for (const i of [0, 2, 3, 4, 5]) d[i]!.drop();
  const sparse = page(1);
  const kept = page(6);
  tick(mm, 12); // past the 10-reservation window of the full pages
  assert.equal(slicedPages(mm), 3, "one page given back");
  assert.equal(mover.moves.length, 1, "one slice moved");
  assert.equal(mover.moves[0]!.from.page, sparse);
  assert.equal(mover.moves[0]!.bytes, 256);
  assert.equal(d[1]!.slice!.page, kept, "into the holes of the other sparse page");
  for (const i of [1, ...Array.from({ length: 10 }, (_, k) => k + 6)]) expectBytes(storage, d[i]!, i, `memory ${i}`);
  const r = mm.report().dynamic[0]!;
  assert.deepEqual(r.compaction, { moves: 1, bytesMoved: 256, pagesGivenBack: 1 });
  const line = formatMemoryReport({ ...mm.report(), counts: undefined } as never).split("\n")[1]!;
  assert.match(line, /best fit, idle pages freed after 10, compacting\)/);
  assert.match(line, /; moved 1 slices \(256 B\), 1 pages given back$/);
  assert.deepEqual(r.shape, {
    kind: "sliced",
    pageSize: 1024,
    maxSliceSize: 1024,
    fit: "best",
    deallocPeriod: 10,
    compaction: { slack: 0, budget: 512, every: 1 },
  });
});

Deno.test("a pinned slice never moves: the pool empties another page into the pinned one's instead", () => {
  const { mm, storage, mover } = manager(layout({ slack: 0, every: 1 }));
  const d = Array.from({ length: 16 }, (_, i) => {
    const m = mm.reserve(256);
    fill(storage, m, i);
    return m;
  });
  for (const i of [0, 2, 3, 4, 5]) d[i]!.drop();
  const pinned = d[1]!;
  const where = pinned.slice!;
  pinned.pin(); // a binding of queued work, a graph, a read, getResource
  tick(mm, 12);
  assert.equal(pinned.slice, where, "the pinned slice stayed");
  assert.ok(mover.moves.every((m) => m.from.page !== where.page), "nothing moved out of its page");
  assert.equal(slicedPages(mm), 3, "the other sparse page went, its slices moved into the pinned one's page");
  assert.deepEqual(mover.moves.map((m) => m.to.page === where.page), [true, true]);
  for (const i of [1, ...Array.from({ length: 10 }, (_, k) => k + 6)]) expectBytes(storage, d[i]!, i, `memory ${i}`);
  pinned.unpin();
});

Deno.test("a reservation that no free slice holds moves the fewest live bytes to make room, instead of making a page", () => {
  // Slack 0.5: two pages for 1 KiB live are within the need (no page is given back), and a third would not be.
  const { mm, storage, mover } = manager(layout({ slack: 0.5, every: 1 }));
  const d = Array.from({ length: 8 }, (_, i) => {
    const m = mm.reserve(256);
    fill(storage, m, i);
    return m;
  });
  for (const i of [1, 3, 5, 7]) d[i]!.drop(); // every page: live, hole, live, hole
  tick(mm, 12);
  const made = storage.allocations.filter((n) => n === 1024).length;
  const big = mm.reserve(512);
  assert.equal(storage.allocations.filter((n) => n === 1024).length, made, "no page made");
  assert.equal(mover.moves.length, 1, "one 256 B slice moved");
  assert.equal(mover.moves[0]!.bytes, 256);
  assert.notEqual(mover.moves[0]!.from.page, mover.moves[0]!.to.page);
  assert.equal(big.slice!.page, mover.moves[0]!.from.page, "the request took the room the move made");
  for (const i of [0, 2, 4, 6]) expectBytes(storage, d[i]!, i, `memory ${i}`);
});

Deno.test("below its need a pool grows as usual: a reservation moves nothing and makes a page", () => {
  const { mm, storage, mover } = manager(layout({ slack: 2, every: 1 }));
  const d = Array.from({ length: 8 }, () => mm.reserve(256));
  for (const i of [1, 3, 5, 7]) d[i]!.drop();
  tick(mm, 12);
  const before = storage.allocations.length;
  mm.reserve(512);
  assert.equal(mover.moves.length, 0);
  assert.equal(storage.allocations.length, before + 1, "a page made");
});

Deno.test("a stream that cannot move now, or a page it may not use, stops moves; empty pages still go back", () => {
  const { mm, mover } = manager(layout({ slack: 0, every: 1 }));
  const d = Array.from({ length: 16 }, () => mm.reserve(256));
  for (const i of [0, 2, 3, 4, 5]) d[i]!.drop();
  mover.ready = false; // held work or a capture on the stream
  tick(mm, 12);
  assert.equal(mover.moves.length, 0);
  assert.equal(slicedPages(mm), 4);
  const sparse = d[1]!.slice!.page;
  mover.ready = true;
  mover.usable = (p: Page) => p !== sparse; // another stream holds unsubmitted work on it
  tick(mm, 4);
  assert.ok(mover.moves.every((m) => m.from.page !== sparse && m.to.page !== sparse));
  assert.equal(d[1]!.slice!.page, sparse);
  // Emptying a page without moving anything needs no stream.
  d[1]!.drop();
  mover.ready = false;
  const movesBefore = mover.moves.length;
  tick(mm, 4);
  assert.equal(mover.moves.length, movesBefore);
  assert.equal(slicedPages(mm), 3, "the emptied page went back");
});

Deno.test("nothing moves without a mover, in a pool without compaction, or during a dry run", () => {
  for (
    const [pools, withMover, lazy] of [
      [layout({ slack: 0, every: 1 }), false, false],
      [layout(false), true, false],
      [layout({ slack: 0, every: 1 }), true, true],
    ] as const
  ) {
    const storage = new ByteStorage(A);
    const mover = new FakeMover(storage);
    const mm = new MemoryManager(storage, { pools: [...pools], label: "still" });
    if (withMover) mm.setMover(mover);
    const d = Array.from({ length: 16 }, () => mm.reserve(256, lazy));
    for (const i of [0, 2, 3, 4, 5]) d[i]!.drop();
    for (let i = 0; i < 12; i++) mm.reserve(2000, lazy).drop();
    assert.equal(mover.moves.length, 0);
    assert.equal(slicedPages(mm), 4);
  }
});

Deno.test("a capture window moves nothing, and installPools hands the new pools the stream's mover", () => {
  const { mm, mover } = manager(layout(false));
  mm.installPools(layout({ slack: 0, every: 1 }));
  const d = Array.from({ length: 16 }, () => mm.reserve(256));
  for (const i of [0, 2, 3, 4, 5]) d[i]!.drop();
  mm.captureBegin();
  tick(mm, 12);
  assert.equal(mover.moves.length, 0, "armed: nothing moves");
  for (const m of mm.captureEnd()) m.drop();
  tick(mm, 2);
  assert.equal(mover.moves.length, 1, "after the capture the new pools move");
});

Deno.test("random reservations, writes, releases and pins with moves forced often keep every live allocation's bytes", () => {
  for (const seed of [1, 2, 3]) {
    const storage = new ByteStorage(A);
    const { mm, mover } = manager([
      {
        kind: "sliced",
        pageSize: 2048,
        maxSliceSize: 1024,
        fit: "best",
        deallocPeriod: 8,
        compaction: { slack: 0, every: 1 },
      },
      // Steps far apart with a budget of several pages: one step empties several pages.
      {
        kind: "sliced",
        pageSize: 8192,
        maxSliceSize: 4096,
        fit: "best",
        deallocPeriod: 4,
        compaction: { slack: 0, every: 7, budget: 32768 },
      },
      { kind: "exclusive", maxAllocSize: 1 << 20 },
    ], storage);
    const r = rng(seed);
    const live: { d: ManagedMemory; seed: number; pinned: Slice | null }[] = [];
    let next = 0;
    let pins = 0;
    for (let step = 0; step < 6000; step++) {
      const x = r();
      if (x < 0.42 || live.length === 0) {
        const size = r() < 0.7 ? 1 + Math.floor(r() * 400) : 400 + Math.floor(r() * 3800);
        const d = mm.reserve(size);
        const item = { d, seed: next++, pinned: null };
        fill(storage, d, item.seed);
        live.push(item);
      } else if (x < 0.8) {
        const [item] = live.splice(Math.floor(r() * live.length), 1);
        if (item!.pinned !== null) item!.d.unpin();
        item!.d.drop();
      } else if (x < 0.9) {
        const item = live[Math.floor(r() * live.length)]!;
        if (item.pinned === null) {
          item.d.pin();
          item.pinned = item.d.slice!;
          pins++;
        } else {
          assert.equal(item.d.slice, item.pinned, `seed ${seed} step ${step}: a pinned slice moved`);
          item.d.unpin();
          item.pinned = null;
        }
      } else if (x < 0.95) {
        mover.ready = r() < 0.7;
        const pages = [...new Set(live.map((l) => l.d.slice!.page))];
        const banned = r() < 0.3 && pages.length > 0 ? pages[Math.floor(r() * pages.length)]! : null;
        mover.usable = (p) => p !== banned;
      } else {
        // Rewrite one allocation (as a launch or a write would), at its current place.
        const item = live[Math.floor(r() * live.length)]!;
        item.seed = next++;
        fill(storage, item.d, item.seed);
      }
      if (step % 97 === 0 || step > 5900) {
        for (const item of live) {
          expectBytes(storage, item.d, item.seed, `seed ${seed} step ${step} memory ${item.seed}`);
          if (item.pinned !== null) assert.equal(item.d.slice, item.pinned);
        }
        // Each pool's tally of live bytes (what its need is taken from) is the sum of its live slices.
        const tallies = new Map<{ live: number }, number>();
        for (const item of live) {
          const s = item.d.slice!;
          tallies.set(s.page.tally, (tallies.get(s.page.tally) ?? 0) + s.effectiveSize);
        }
        for (const [tally, bytes] of tallies) assert.equal(tally.live, bytes, `seed ${seed} step ${step}: live tally`);
        // Live slices tile no byte twice.
        const seen = new Map<Page, [number, number][]>();
        for (const item of live) {
          const s = item.d.slice!;
          assert.equal(s.owner, item.d, "the slice belongs to its descriptor");
          const list = seen.get(s.page) ?? [];
          for (const [a, b] of list) assert.ok(s.offset >= b || s.offset + s.size <= a, "live slices overlap");
          list.push([s.offset, s.offset + s.size]);
          seen.set(s.page, list);
        }
      }
    }
    const moved = mm.report().dynamic.reduce((n, p) => n + (p.compaction?.moves ?? 0), 0);
    const back = mm.report().dynamic.reduce((n, p) => n + (p.compaction?.pagesGivenBack ?? 0), 0);
    assert.ok(moved > 100, `seed ${seed}: ${moved} moves`);
    assert.ok(back > 10, `seed ${seed}: ${back} pages given back`); // compaction gave pages back, not only moved

    assert.ok(pins > 100, `seed ${seed}: ${pins} pins`);
    assert.equal(mover.moves.length, moved);
    for (const item of live) {
      if (item.pinned !== null) item.d.unpin();
      item.d.drop();
    }
    mm.cleanup(true);
    assert.deepEqual(mm.usage(), { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 });
  }
});

Deno.test("with compaction, a training-like loop whose quiet phase outlasts the window stops creating buffers after a few rounds", () => {
  const storage = new FakeStorage(256);
  const mover = new FakeMover();
  const mm = new MemoryManager(storage, {
    pools: [
      { kind: "sliced", pageSize: 1 << 20, maxSliceSize: 64 << 10, fit: "best", deallocPeriod: 200, compaction: true },
      { kind: "sliced", pageSize: 2 << 20, maxSliceSize: 1 << 20, fit: "best", deallocPeriod: 200, compaction: true },
    ],
    label: "loop",
  });
  mm.setMover(mover);
  const made = trainingLoop((size) => mm.reserve(size), () => storage.allocations.length, 12, rng(7));
  assert.ok(made.slice(0, 2).every((n) => n > 0), `buffers made per round: ${made.join(", ")}`);
  assert.deepEqual(made.slice(6), [0, 0, 0, 0, 0, 0], `buffers made per round: ${made.join(", ")}`);
  assert.ok(mover.moves.length > 0, "the pools did compact");
});

Deno.test("a pool's tally of live bytes follows reservations, releases, pins, moves and memory a graph keeps after its release", () => {
  const { mm } = manager(layout({ slack: 0, every: 1 }));
  const a = mm.reserve(100);
  const b = mm.reserve(256);
  const tally = a.slice!.page.tally;
  assert.equal(tally.live, 128 + 256);
  a.pin();
  a.drop(); // released while pinned: still live
  assert.equal(tally.live, 128 + 256);
  a.unpin();
  assert.equal(tally.live, 256);
  b.drop();
  assert.equal(tally.live, 0);
  // A capture retains what it reserved, even what was released inside the window (a graph keeps using it).
  mm.captureBegin();
  mm.capturePrimingEnd();
  const c = mm.reserve(64);
  c.drop();
  const kept = mm.captureEnd();
  const persistent = c.slice!.page.tally;
  assert.equal(persistent.live, 64, "retained again: counted again");
  for (const m of kept) m.drop();
  assert.equal(persistent.live, 0);
  assert.equal(tally.live, 0);
});
