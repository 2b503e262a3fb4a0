/**
 * Memory pool layouts: the presets and custom pool lists, resolved against
 * the device's limits (CubeCL's `MemoryConfiguration`, `MemoryPoolsConfig` and
 * `resolve`).
 *
 * The default layout is `compact` (ours): pages sized for the allocations they
 * serve, not for the binding limit. CubeCL's `subslices` ladder takes its page
 * sizes from `maxStorageBufferBindingSize`, so on a device with a 2 GiB limit
 * a few MiB of tensors between 512 KiB and 4 MiB reserve a 32 MiB page, and a
 * churn of mixed sizes up to 1 MiB holds 1.8× its peak (1.2× with 128 MiB).
 *
 * Deliberate departures from CubeCL's contract (1.11):
 * - `resolveMemoryConfiguration` also refuses, as `page-too-large`, a sliced
 *   page or an exclusive `maxAllocSize` above the device's `maxBufferSize`
 *   (no buffer of that size could ever be created).
 * - An exclusive pool without `deallocPeriod` never runs its idle sweep (its
 *   free pages go on explicit cleanup only), as with CubeCL's unbounded period.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { PoolConfigError } from "../errors.ts";
import { MAX_SLICED_POOL_PAGES } from "./sliced_pool.ts";
import { withCompactionDefaults } from "./_compaction.ts";
import type { MemoryConfiguration } from "../contract/memory_types.ts";
import type { PoolConfig } from "../contract/memory_types.ts";
import { describe } from "../_util/describe.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Device memory properties that shape pools (CubeCL's `DeviceProperties.memory`). */
export interface MemoryProperties {
  /** Largest page: `maxStorageBufferBindingSize`. */
  maxPageSize: number;
  /** `max(minUniformBufferOffsetAlignment, minStorageBufferOffsetAlignment)`. */
  alignment: number;
  /** `maxBufferSize`. */
  maxBufferSize: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

function period(size: number): number {
  return 5000 * Math.round(1 + size / GiB);
}

/**
 * The sliced pools of the `compact` preset: page, largest slice, and the
 * reservations a page may stay free before it is given back. A page holds at
 * least two of its largest slices; the small pages keep the step a new page
 * adds to the reservation small, and pages that empty are given back (at a
 * re-creation cost of one `createBuffer`, which a page used at least that
 * often never pays). The small pools give an empty page back after 200
 * reservations (a wait that grows while given-back pages keep being needed
 * again, so steady loops keep theirs): on the churn of issue 18 over 40
 * seeds that ends at 1.06× the peak live bytes (median) against 1.13× at a
 * fixed 1,000, for about 6 more `createBuffer` calls per 10,000 operations
 * (`tests/memory/churn_ratio_test.ts`). Every rung compacts (`compaction:
 * true`): the pools move live slices to pack their pages. On the software
 * adapter that churn then ends at 1.14× the worst of 40 seeds it was not
 * tuned on and 1.16× the worst of the 20 it was (1.04–1.07× the median),
 * where the sliced pools alone end at up to 1.19× and 1.26×; on an H100 at
 * 1.071× the worst of 4 seeds not tuned on, against 1.207× without moves
 * (`bench/churn.ts`, bench/RESULTS.md run 36).
 */
const COMPACT_RUNGS: readonly (readonly [page: number, maxSlice: number, idle: number])[] = [
  [1 * MiB, 64 * 1024, 200],
  [2 * MiB, 1 * MiB, 200],
  [16 * MiB, 8 * MiB, 5000],
];

/** Size classes per doubling of the `compact` preset's exclusive tail (pages at most 9% above a request). */
const COMPACT_TAIL_CLASSES = 8;

/**
 * The default layout (ours, not CubeCL's): the zero-byte pool, three sliced
 * pools of fixed page sizes (1 MiB for ≤ 64 KiB, 2 MiB for ≤ 1 MiB, 16 MiB
 * for ≤ 8 MiB) placing best fit and giving back pages that stay free, and an
 * exclusive tail up to the largest page whose pages are sized to 8 classes
 * per doubling. The same on every device, except that the tail follows
 * `maxStorageBufferBindingSize` (and rungs above it are left out). The
 * sliced pools compact: they move live slices to pack their pages and give
 * the emptied ones back (list the pools with `compaction: false` for pools
 * that never move memory).
 */
export function compactPreset(props: MemoryProperties): PoolConfig[] {
  const { maxPageSize, alignment } = props;
  const limit = Math.min(maxPageSize, props.maxBufferSize);
  const pools: PoolConfig[] = [{ kind: "exclusive", maxAllocSize: 0 }];
  for (const [page, maxSlice, idle] of COMPACT_RUNGS) {
    const pageSize = alignUp(page, alignment);
    if (pageSize > limit) break;
    pools.push({
      kind: "sliced",
      pageSize,
      maxSliceSize: Math.min(alignUp(maxSlice, alignment), pageSize),
      fit: "best",
      deallocPeriod: idle,
      compaction: true,
    });
  }
  const maxAlloc = Math.floor(maxPageSize / alignment) * alignment;
  pools.push({
    kind: "exclusive",
    maxAllocSize: maxAlloc,
    deallocPeriod: period(maxAlloc),
    sizeClasses: COMPACT_TAIL_CLASSES,
  });
  return pools;
}

/** CubeCL's native default ladder for a device (its `SubSlices` preset). */
export function subSlicesPreset(props: MemoryProperties): PoolConfig[] {
  const { maxPageSize, alignment } = props;
  const ladder: PoolConfig[] = [];
  let cur = maxPageSize;
  let k = 1;
  while (cur >= 32 * MiB) {
    cur = alignUp(Math.ceil(cur / 4), alignment);
    ladder.push({ kind: "sliced", pageSize: cur, maxSliceSize: Math.floor(cur / 2 ** k) });
    k++;
  }
  ladder.reverse();
  const maxAlloc = Math.floor(maxPageSize / alignment) * alignment;
  return [
    { kind: "exclusive", maxAllocSize: 0 },
    ...ladder,
    { kind: "exclusive", maxAllocSize: maxAlloc, deallocPeriod: period(maxAlloc) },
  ];
}

/** 24 exclusive buckets from 32 KiB to the largest page (CubeCL's `ExclusivePages` preset). */
export function exclusivePagesPreset(props: MemoryProperties): PoolConfig[] {
  const lo = Math.log(32 * 1024);
  const hi = Math.log(props.maxPageSize);
  const sizes = new Set<number>();
  for (let i = 0; i < 24; i++) {
    const exact = Math.exp(lo + (i / 23) * (hi - lo));
    // exp(ln(x)) may land a few ulps off an integer (2 GiB gives 2147483648.000002):
    // snap such values (relative to their size) before rounding up.
    const near = Math.round(exact);
    const bytes = Math.abs(exact - near) <= exact * 1e-12 ? near : Math.ceil(exact);
    sizes.add(alignUp(bytes, props.alignment));
  }
  return [...sizes].sort((a, b) => a - b).map((size) => ({
    kind: "exclusive",
    maxAllocSize: size,
    deallocPeriod: period(size),
  }));
}

/**
 * Resolves a sliced pool's `compaction` (absent or false: none), with its
 * defaults filled in.
 *
 * @param c The field as given.
 * @param fit The pool's placement.
 * @param pageSize Its page size, aligned.
 * @param where The pool, for errors.
 * @returns The resolved policy, or undefined.
 * @throws {PoolConfigError} For a pool that does not place best fit, or a bad field.
 */
function resolveCompaction(
  c: boolean | { slack?: number; budget?: number; every?: number } | undefined,
  fit: string | undefined,
  pageSize: number,
  where: string,
): { slack: number; budget: number; every: number } | undefined {
  if (c === undefined || c === false) return undefined;
  if (c !== true && (c === null || typeof c !== "object")) {
    throw new PoolConfigError(
      "preset-unavailable",
      `${where}: compaction must be a boolean or { slack, budget, every }, got ${describe(c)}`,
    );
  }
  if (fit !== "best") {
    throw new PoolConfigError("preset-unavailable", `${where}: compaction needs fit: "best", got fit ${describe(fit)}`);
  }
  const o = withCompactionDefaults(c, pageSize);
  const slack = o.slack;
  if (typeof slack !== "number" || !Number.isFinite(slack) || slack < -1) {
    throw new PoolConfigError(
      "zero-size",
      `${where}: compaction.slack must be a finite number >= -1, got ${describe(slack)}`,
    );
  }
  const positive = (field: string, v: number) => {
    if (!Number.isSafeInteger(v) || v < 1) {
      throw new PoolConfigError(
        "zero-size",
        `${where}: compaction.${field} must be a positive integer, got ${describe(v)}`,
      );
    }
    return v;
  };
  return {
    slack,
    budget: positive("budget", o.budget),
    every: positive("every", o.every),
  };
}

/**
 * Resolves a configuration against the device: expands presets, rounds sizes
 * up to the alignment, fills defaults, and rejects layouts that can never be
 * valid.
 *
 * @example Usage
 * ```ts
 * import { resolveMemoryConfiguration } from "./memory_config.ts";
 * const pools = resolveMemoryConfiguration(
 *   { pools: [{ kind: "sliced", pageSize: 1000 }] },
 *   { maxPageSize: 1 << 27, alignment: 256, maxBufferSize: 1 << 28 },
 * );
 * console.log(pools); // [{ kind: "sliced", pageSize: 1024, maxSliceSize: 1024 }]
 * ```
 *
 * @param config The layout.
 * @param props The device memory properties.
 * @returns The pools in routing order, with effective sizes.
 * @throws {PoolConfigError} When the layout is empty, has a zero size, a slice
 * larger than its page, a cap smaller than a page, more than 65535 pages, 255
 * or more pools, or a page larger than `maxBufferSize`.
 */
export function resolveMemoryConfiguration(
  config: MemoryConfiguration,
  props: MemoryProperties,
): PoolConfig[] {
  if (config === "compact") return compactPreset(props);
  if (config === "subslices") return subSlicesPreset(props);
  if (config === "exclusive-pages") return exclusivePagesPreset(props);
  if (config === null || typeof config !== "object" || !Array.isArray(config.pools)) {
    throw new PoolConfigError(
      "preset-unavailable",
      `memory configuration must be "compact", "subslices", "exclusive-pages" or { pools: [...] }, got ${
        JSON.stringify(config)
      }`,
    );
  }
  const pools = config.pools;
  if (pools.length === 0) throw new PoolConfigError("empty-pool-list", "memory configuration lists no pools");
  if (pools.length >= 255) {
    throw new PoolConfigError("too-many-pools", `at most 254 pools are allowed, got ${pools.length}`);
  }
  const a = props.alignment;
  return pools.map((p, i): PoolConfig => {
    const where = `pools[${i}] (${p?.kind})`;
    const size = (field: string, v: number | undefined, allowZero = false): number | undefined => {
      if (v === undefined) return undefined;
      if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0 || (!allowZero && v === 0)) {
        const what = allowZero ? "a non-negative" : "a positive";
        throw new PoolConfigError("zero-size", `${where}: ${field} must be ${what} integer, got ${v}`);
      }
      return alignUp(v, a);
    };
    switch (p?.kind) {
      case "exclusive": {
        const maxAllocSize = size("maxAllocSize", p.maxAllocSize, true) ?? 0;
        // Each allocation is its own buffer, first sized near maxAllocSize / 2:
        // above maxBufferSize no buffer could ever be made.
        if (maxAllocSize > props.maxBufferSize) {
          throw new PoolConfigError(
            "page-too-large",
            `${where}: maxAllocSize ${formatBytesExact(maxAllocSize)} is above the device's maxBufferSize ${
              formatBytesExact(props.maxBufferSize)
            }`,
          );
        }
        const sizeClasses = p.sizeClasses;
        if (sizeClasses !== undefined && (!Number.isSafeInteger(sizeClasses) || sizeClasses < 1)) {
          throw new PoolConfigError(
            "zero-size",
            `${where}: sizeClasses must be a positive integer, got ${sizeClasses}`,
          );
        }
        return {
          kind: "exclusive",
          maxAllocSize,
          ...(p.deallocPeriod === undefined ? {} : { deallocPeriod: p.deallocPeriod }),
          ...(sizeClasses === undefined ? {} : { sizeClasses }),
        };
      }
      case "direct":
        return {
          kind: "direct",
          ...(p.reclaimAt === undefined ? {} : { reclaimAt: size("reclaimAt", p.reclaimAt, true) }),
        };
      case "sliced": {
        const pageSize = size("pageSize", p.pageSize) ?? 0;
        if (pageSize === 0) throw new PoolConfigError("zero-size", `${where}: pageSize is required`);
        if (pageSize > props.maxBufferSize) {
          throw new PoolConfigError(
            "page-too-large",
            `${where}: pageSize ${formatBytesExact(pageSize)} is above the device's maxBufferSize ${
              formatBytesExact(props.maxBufferSize)
            }`,
          );
        }
        const maxSliceSize = size("maxSliceSize", p.maxSliceSize) ?? pageSize;
        if (maxSliceSize > pageSize) {
          throw new PoolConfigError(
            "slice-larger-than-page",
            `${where}: maxSliceSize ${formatBytesExact(maxSliceSize)} is larger than pageSize ${
              formatBytesExact(pageSize)
            }`,
          );
        }
        const maxPoolSize = size("maxPoolSize", p.maxPoolSize);
        if (maxPoolSize !== undefined && maxPoolSize < pageSize) {
          throw new PoolConfigError(
            "cap-smaller-than-page",
            `${where}: maxPoolSize ${formatBytesExact(maxPoolSize)} is smaller than one page (${
              formatBytesExact(pageSize)
            })`,
          );
        }
        if (maxPoolSize !== undefined && Math.floor(maxPoolSize / pageSize) > MAX_SLICED_POOL_PAGES) {
          throw new PoolConfigError(
            "too-many-pages",
            `${where}: maxPoolSize / pageSize = ${
              Math.floor(maxPoolSize / pageSize)
            } pages, above ${MAX_SLICED_POOL_PAGES}`,
          );
        }
        if (p.fit !== undefined && p.fit !== "first" && p.fit !== "best") {
          throw new PoolConfigError(
            "preset-unavailable",
            `${where}: fit must be "first" or "best", got ${describe(p.fit)}`,
          );
        }
        const compaction = resolveCompaction(p.compaction, p.fit, pageSize, where);
        return {
          kind: "sliced",
          pageSize,
          maxSliceSize,
          ...(maxPoolSize === undefined ? {} : { maxPoolSize }),
          ...(p.fit === undefined ? {} : { fit: p.fit }),
          ...(p.deallocPeriod === undefined ? {} : { deallocPeriod: p.deallocPeriod }),
          ...(compaction === undefined ? {} : { compaction }),
        };
      }
      default:
        throw new PoolConfigError(
          "preset-unavailable",
          `${where}: kind must be "exclusive", "sliced" or "direct"`,
        );
    }
  });
}
