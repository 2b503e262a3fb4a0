/** Contract under test: the pool presets and `resolveMemoryConfiguration` (section 3.4 and 1.11 of the contract). */

import assert from "node:assert/strict";
import {
  compactPreset,
  exclusivePagesPreset,
  resolveMemoryConfiguration,
  subSlicesPreset,
} from "../../src/memory/memory_config.ts";
import { PoolConfigError } from "../../mod.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const props = (maxPageSize: number) => ({ maxPageSize, alignment: 256, maxBufferSize: 4 * GiB });

Deno.test("the subslices preset for a 128 MiB page limit is Excl(0), Sliced(8 MiB, ≤2 MiB), Sliced(32 MiB, ≤16 MiB), Excl(≤128 MiB)", () => {
  assert.deepEqual(subSlicesPreset(props(128 * MiB)), [
    { kind: "exclusive", maxAllocSize: 0 },
    { kind: "sliced", pageSize: 8 * MiB, maxSliceSize: 2 * MiB },
    { kind: "sliced", pageSize: 32 * MiB, maxSliceSize: 16 * MiB },
    { kind: "exclusive", maxAllocSize: 128 * MiB, deallocPeriod: 5000 },
  ]);
});

Deno.test("the subslices preset for 1 GiB and 2 GiB page limits matches CubeCL's ladders", () => {
  const shape = (l: ReturnType<typeof subSlicesPreset>) =>
    l.map((p) =>
      p.kind === "sliced"
        ? `S${p.pageSize / MiB}/${p.maxSliceSize! / KiB}K`
        : `E${p.kind === "exclusive" ? p.maxAllocSize / MiB : ""}:${
          p.kind === "exclusive" ? p.deallocPeriod ?? "-" : ""
        }`
    );
  assert.deepEqual(shape(subSlicesPreset(props(1 * GiB))), [
    "E0:-",
    "S16/2048K",
    "S64/16384K",
    "S256/131072K",
    "E1024:10000",
  ]);
  assert.deepEqual(shape(subSlicesPreset(props(2 * GiB))), [
    "E0:-",
    "S8/512K",
    "S32/4096K",
    "S128/32768K",
    "S512/262144K",
    "E2048:15000",
  ]);
});

Deno.test("the exclusive-pages preset has 24 buckets from 32 KiB to the page limit, about ×1.44 apart", () => {
  const buckets = exclusivePagesPreset(props(128 * MiB)).map((p) => p.kind === "exclusive" ? p.maxAllocSize : 0);
  const expected = [
    32,
    46,
    66,
    95,
    136,
    195,
    280,
    402,
    578,
    829,
    1191,
    1709,
    2454,
    3523,
    5058,
    7262,
    10426,
    14968,
    21489,
    30852,
    44293,
    63591,
    91296,
    131072,
  ];
  assert.equal(buckets.length, 24);
  buckets.forEach((b, i) => assert.ok(Math.abs(b / KiB - expected[i]!) <= 0.5, `bucket ${i}: ${b / KiB} KiB`));
  assert.ok(buckets.every((b) => b % 256 === 0));
});

Deno.test("the compact preset (the default) has the same compacting sliced pools at every limit, and an exclusive tail up to the page limit", () => {
  const expected = (maxPage: number) => [
    { kind: "exclusive", maxAllocSize: 0 },
    {
      kind: "sliced",
      pageSize: 1 * MiB,
      maxSliceSize: 64 * KiB,
      fit: "best",
      deallocPeriod: 200,
      compaction: true,
    },
    {
      kind: "sliced",
      pageSize: 2 * MiB,
      maxSliceSize: 1 * MiB,
      fit: "best",
      deallocPeriod: 200,
      compaction: true,
    },
    {
      kind: "sliced",
      pageSize: 16 * MiB,
      maxSliceSize: 8 * MiB,
      fit: "best",
      deallocPeriod: 5000,
      compaction: true,
    },
    {
      kind: "exclusive",
      maxAllocSize: Math.floor(maxPage / 256) * 256,
      deallocPeriod: 5000 * Math.round(1 + maxPage / GiB),
      sizeClasses: 8,
    },
  ];
  for (const maxPage of [128 * MiB, 1 * GiB, 2 * GiB, 4 * GiB - 4]) {
    assert.deepEqual(compactPreset(props(maxPage)), expected(maxPage), `page limit ${maxPage}`);
  }
  assert.deepEqual(resolveMemoryConfiguration("compact", props(128 * MiB)), expected(128 * MiB));
});

Deno.test("resolveMemoryConfiguration() rounds sizes up to the alignment and fills defaults", () => {
  assert.deepEqual(
    resolveMemoryConfiguration({
      pools: [
        { kind: "sliced", pageSize: 1000, maxPoolSize: 3000 },
        { kind: "exclusive", maxAllocSize: 0 },
        { kind: "direct", reclaimAt: 10 },
      ],
    }, props(MiB)),
    [
      { kind: "sliced", pageSize: 1024, maxSliceSize: 1024, maxPoolSize: 3072 },
      { kind: "exclusive", maxAllocSize: 0 },
      { kind: "direct", reclaimAt: 256 },
    ],
  );
  assert.deepEqual(
    resolveMemoryConfiguration({
      pools: [
        { kind: "sliced", pageSize: 4096, fit: "best", deallocPeriod: 50 },
        { kind: "exclusive", maxAllocSize: 1000, sizeClasses: 4 },
      ],
    }, props(MiB)),
    [
      { kind: "sliced", pageSize: 4096, maxSliceSize: 4096, fit: "best", deallocPeriod: 50 },
      { kind: "exclusive", maxAllocSize: 1024, sizeClasses: 4 },
    ],
  );
});

Deno.test("resolveMemoryConfiguration() rejects layouts that can never be valid", () => {
  const bad = (pools: unknown, kind: string) =>
    assert.throws(
      () => resolveMemoryConfiguration({ pools } as never, props(MiB)),
      (e: unknown) => e instanceof PoolConfigError && e.kind === kind,
    );
  bad([], "empty-pool-list");
  bad([{ kind: "sliced", pageSize: 0 }], "zero-size");
  bad([{ kind: "sliced", pageSize: 1024, maxSliceSize: 2048 }], "slice-larger-than-page");
  bad([{ kind: "sliced", pageSize: 4096, maxPoolSize: 1024 }], "cap-smaller-than-page");
  bad([{ kind: "sliced", pageSize: 256, maxPoolSize: 256 * 70000 }], "too-many-pages");
  bad(Array.from({ length: 255 }, () => ({ kind: "direct" })), "too-many-pools");
  bad([{ kind: "sliced", pageSize: 8 * GiB }], "page-too-large");
  bad([{ kind: "exclusive", maxAllocSize: 12 * GiB }], "page-too-large");
  bad([{ kind: "ring" }], "preset-unavailable");
  bad([{ kind: "sliced", pageSize: 4096, fit: "worst" }], "preset-unavailable");
  bad([{ kind: "exclusive", maxAllocSize: 4096, sizeClasses: 0 }], "zero-size");
  bad([{ kind: "exclusive", maxAllocSize: 4096, sizeClasses: 1.5 }], "zero-size");
  assert.throws(() => resolveMemoryConfiguration("fast" as never, props(MiB)), PoolConfigError);
});

Deno.test("a best-fit sliced pool's compaction resolves with its defaults filled in; false or absent is none", () => {
  const sliced = (compaction: unknown) => ({ kind: "sliced", pageSize: 4000, fit: "best", compaction }) as never;
  const resolved = (compaction: unknown) => resolveMemoryConfiguration({ pools: [sliced(compaction)] }, props(MiB))[0];
  assert.deepEqual(resolved(true), {
    kind: "sliced",
    pageSize: 4096,
    maxSliceSize: 4096,
    fit: "best",
    compaction: { slack: 0.03, budget: 2048, every: 16 },
  });
  assert.deepEqual(
    (resolved({ slack: 0, every: 1, budget: undefined }) as { compaction: unknown }).compaction,
    { slack: 0, budget: 2048, every: 1 },
  );
  assert.equal("compaction" in resolved(false)!, false);
  assert.equal("compaction" in resolved(undefined)!, false);
});

Deno.test("compaction is refused on a first-fit pool and with a bad slack, budget or every", () => {
  const bad = (pool: unknown, kind: string, says: RegExp) =>
    assert.throws(
      () => resolveMemoryConfiguration({ pools: [pool] } as never, props(MiB)),
      (e: unknown) => e instanceof PoolConfigError && e.kind === kind && says.test(e.message),
    );
  bad({ kind: "sliced", pageSize: 4096, compaction: true }, "preset-unavailable", /needs fit: "best"/);
  bad({ kind: "sliced", pageSize: 4096, fit: "first", compaction: {} }, "preset-unavailable", /needs fit/);
  bad({ kind: "sliced", pageSize: 4096, fit: "best", compaction: "yes" }, "preset-unavailable", /a boolean or/);
  bad({ kind: "sliced", pageSize: 4096, fit: "best", compaction: { slack: -1.5 } }, "zero-size", /slack/);
  bad({ kind: "sliced", pageSize: 4096, fit: "best", compaction: { slack: NaN } }, "zero-size", /slack/);
  bad({ kind: "sliced", pageSize: 4096, fit: "best", compaction: { budget: 0 } }, "zero-size", /budget/);
  bad({ kind: "sliced", pageSize: 4096, fit: "best", compaction: { every: 2.5 } }, "zero-size", /every/);
});
