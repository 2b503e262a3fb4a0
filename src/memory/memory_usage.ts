/**
 * Memory usage and per-pool reports (CubeCL's `MemoryUsage`,
 * `MemoryPoolReport` and `MemoryReport`), with human-readable forms.
 *
 * @module
 */

import { formatBytes, formatPercent } from "../_util/format.ts";
import type { MemoryReport } from "../contract/memory_types.ts";
import type { MemoryUsage } from "../contract/memory_types.ts";
import type { PoolShape } from "../contract/memory_types.ts";

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
 * Formats a usage on one line, with efficiency percentages. Sizes are in
 * binary units (B, KiB, MiB, GiB, TiB): a count a unit states exactly prints
 * without decimals ("8 KiB", "1.5 MiB"), a rounded one keeps its trailing
 * zeros ("1.46 KiB").
 *
 * @example Usage
 * ```ts
 * import { formatMemoryUsage } from "@denogpu/runtime";
 * console.log(formatMemoryUsage({ numberAllocs: 2, bytesInUse: 1500, bytesPadding: 36, bytesReserved: 8192 }));
 * // 2 allocations, 1.46 KiB in use (18.3% of reserved), 36 B padding, 8 KiB reserved
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
  switch (shape.kind) {
    case "sliced":
      return `sliced(page ${formatBytes(shape.pageSize)}, slices ≤ ${formatBytes(shape.maxSliceSize)}${
        shape.maxPoolSize === undefined ? "" : `, cap ${formatBytes(shape.maxPoolSize)}`
      }${shape.fit === "best" ? ", best fit" : ""}${
        shape.deallocPeriod === undefined ? "" : `, idle pages freed after ${shape.deallocPeriod}`
      }${shape.compaction === undefined ? "" : ", compacting"})`;
    case "exclusive":
      return `exclusive(≤ ${formatBytes(shape.maxAllocSize)}${
        shape.sizeClasses === undefined ? "" : `, ${shape.sizeClasses} classes/2×`
      })`;
    case "direct":
      return `direct(${shape.reclaimAt === undefined ? "no watermark" : `reclaim at ${formatBytes(shape.reclaimAt)}`})`;
    case "persistent":
      return "persistent";
  }
}

/**
 * Formats a report as a table, one line per pool in routing order, sizes in
 * binary units as {@linkcode formatMemoryUsage} prints them.
 *
 * @example Print the pools of a client's stream
 * ```ts
 * import { createClient, formatMemoryReport } from "@denogpu/runtime";
 *
 * await using client = await createClient();
 * using h = client.empty(1 << 20);
 * console.log(formatMemoryReport(client.memoryReport())); // "memory report (… pools, routing order): …"
 * ```
 *
 * @param report The report to format.
 * @returns A multi-line human-readable table.
 */
export function formatMemoryReport(report: MemoryReport): string {
  const rows = [
    ...report.dynamic.map((r, i) => [String(i), r] as const),
    ["P", report.persistent] as const,
    ...(report.counts === undefined ? [] : [["C", report.counts] as const]),
  ];
  const lines = rows.map(([idx, r]) =>
    `  ${idx.padStart(2)} ${formatShape(r.shape).padEnd(80)} pages ${String(r.pages).padStart(3)} (peak ${r.pagesPeak}${
      r.pagesUnmapped ? `, ${r.pagesUnmapped} unmapped` : ""
    })  ${formatMemoryUsage(r.usage)}${r.largestAlloc ? `; largest ${formatBytes(r.largestAlloc)}` : ""}${
      r.compaction === undefined || r.compaction.moves + r.compaction.pagesGivenBack === 0
        ? ""
        : `; moved ${r.compaction.moves} slices (${
          formatBytes(r.compaction.bytesMoved)
        }), ${r.compaction.pagesGivenBack} pages given back`
    }`
  );
  return `memory report (${rows.length} pools, routing order):\n${lines.join("\n")}`;
}
