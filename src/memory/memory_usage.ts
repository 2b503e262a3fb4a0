/**
 * Memory usage and per-pool reports (CubeCL's `MemoryUsage`,
 * `MemoryPoolReport` and `MemoryReport`), with human-readable forms.
 *
 * @module
 */

import { formatBytes, formatPercent } from "../_util/format.ts";

/** How much device memory is held and used. */
export interface MemoryUsage {
  /** Live allocations. */
  numberAllocs: number;
  /** Requested bytes of live allocations. */
  bytesInUse: number;
  /** Alignment padding of live allocations, in bytes. */
  bytesPadding: number;
  /** Device bytes held, free or not. */
  bytesReserved: number;
}

/** The effective shape of one pool, after alignment and shrinking. */
export type PoolShape =
  | { type: "sliced"; pageSize: number; maxSliceSize: number; maxPoolSize?: number }
  | { type: "exclusive"; maxAllocSize: number; deallocPeriod?: number }
  | { type: "direct"; reclaimAt?: number }
  | { type: "persistent" };

/** The state of one pool. */
export interface MemoryPoolReport {
  /** The pool's kind and effective shape. */
  kind: PoolShape;
  /** The pool's usage. */
  usage: MemoryUsage;
  /** Pages (device buffers) held now. */
  pages: number;
  /** Highest number of pages held at once since the pool was built. */
  pagesPeak: number;
  /** Pages carved under a dry run and not yet backed by device memory. */
  pagesUnmapped: number;
  /** Largest requested size ever served, in bytes. */
  largestAlloc: number;
}

/** The main pools of one stream: dynamic pools in routing order, then the persistent pool. */
export interface MemoryReport {
  /** Dynamic pools, in routing order. */
  dynamic: MemoryPoolReport[];
  /** The persistent pool (weights and graph working sets). */
  persistent: MemoryPoolReport;
}

/** Returns an all-zero usage. */
export function emptyUsage(): MemoryUsage {
  return { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 };
}

/** Sums usages field by field. */
export function combineUsage(...usages: MemoryUsage[]): MemoryUsage {
  const total = emptyUsage();
  for (const u of usages) {
    total.numberAllocs += u.numberAllocs;
    total.bytesInUse += u.bytesInUse;
    total.bytesPadding += u.bytesPadding;
    total.bytesReserved += u.bytesReserved;
  }
  return total;
}

/**
 * Formats a usage on one line, with efficiency percentages.
 *
 * @example Usage
 * ```ts
 * import { formatMemoryUsage } from "@denogpu/runtime";
 * console.log(formatMemoryUsage({ numberAllocs: 2, bytesInUse: 1500, bytesPadding: 36, bytesReserved: 8192 }));
 * // 2 allocations, 1.50 KB in use (18.3% of reserved), 36 B padding, 8.19 KB reserved
 * ```
 *
 * @param usage The usage to format.
 * @returns One human-readable line.
 */
export function formatMemoryUsage(usage: MemoryUsage): string {
  return `${usage.numberAllocs} allocation${usage.numberAllocs === 1 ? "" : "s"}, ${
    formatBytes(usage.bytesInUse)
  } in use (${formatPercent(usage.bytesInUse, usage.bytesReserved)} of reserved), ${
    formatBytes(usage.bytesPadding)
  } padding, ${formatBytes(usage.bytesReserved)} reserved`;
}

function formatShape(shape: PoolShape): string {
  switch (shape.type) {
    case "sliced":
      return `sliced(page ${formatBytes(shape.pageSize)}, slices ≤ ${formatBytes(shape.maxSliceSize)}${
        shape.maxPoolSize === undefined ? "" : `, cap ${formatBytes(shape.maxPoolSize)}`
      })`;
    case "exclusive":
      return `exclusive(≤ ${formatBytes(shape.maxAllocSize)})`;
    case "direct":
      return `direct(${shape.reclaimAt === undefined ? "no watermark" : `reclaim at ${formatBytes(shape.reclaimAt)}`})`;
    case "persistent":
      return "persistent";
  }
}

/**
 * Formats a report as a table, one line per pool in routing order.
 *
 * @param report The report to format.
 * @returns A multi-line human-readable table.
 */
export function formatMemoryReport(report: MemoryReport): string {
  const rows = [
    ...report.dynamic.map((r, i) => [String(i), r] as const),
    [
      "P",
      report.persistent,
    ] as const,
  ];
  const lines = rows.map(([idx, r]) =>
    `  ${idx.padStart(2)} ${formatShape(r.kind).padEnd(44)} pages ${String(r.pages).padStart(3)} (peak ${r.pagesPeak}${
      r.pagesUnmapped ? `, ${r.pagesUnmapped} unmapped` : ""
    })  ${formatMemoryUsage(r.usage)}${r.largestAlloc ? `; largest ${formatBytes(r.largestAlloc)}` : ""}`
  );
  return `memory report (${rows.length} pools, routing order):\n${lines.join("\n")}`;
}
