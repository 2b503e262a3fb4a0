/**
 * What `scaling.ts` writes and `scaling_chart.ts` reads: the series of a run
 * (points of runtime and raw WebGPU cost against the amount of work), the
 * growth check of each series, and its table as printed.
 *
 * A series' `cost` says how a point's value relates to the work `x`, so that
 * every series reduces to a cost per unit of work (per launch's binding or
 * info word, per allocation, per dispatch, per byte):
 * - `"total"`: the value is the cost of x units (µs for a launch of x
 *   bindings, ms for an all-reduce of x bytes): per unit = value ÷ x;
 * - `"per-unit"`: the value is already the cost of one unit, measured at x
 *   (µs per allocation with x live, µs per dispatch of a graph of x): per
 *   unit = value;
 * - `"rate"`: the value is units per time (GB/s): per unit = 1 ÷ value.
 *
 * @module
 */

/** One measured amount of work. */
export interface ScalingPoint {
  /** The amount of work (bindings, info words, live allocations, launches, bytes). */
  readonly x: number;
  /** The runtime's value, in `unit`, or null when not measured. */
  readonly runtime: number | null;
  /** The raw WebGPU baseline's value, in `unit`, or null when the series has none. */
  readonly raw: number | null;
  /** Unit of both values. */
  readonly unit: string;
}

/** How a point's value relates to its work (see the module's description). */
export type CostKind = "total" | "per-unit" | "rate";

/** The growth check of one series. */
export interface Growth {
  /** Cost per unit at the largest x ÷ at the smallest x, for the runtime. */
  readonly runtime: number;
  /** The same for the raw baseline, or null. */
  readonly raw: number | null;
  /** Worst rise of the runtime's cost per unit: the largest `perUnit[j] ÷ perUnit[i]` for i < j. */
  readonly runtimeRise: number;
  /** The same for the raw baseline, or null. */
  readonly rawRise: number | null;
  /** Least-squares log-log slope of the runtime's total cost (per unit × x) against x: 1 is linear. */
  readonly runtimeSlope: number;
  /** The same for the raw baseline, or null. */
  readonly rawSlope: number | null;
  /** `superlinear` when the runtime's cost per unit rises more than `LIMIT`× across the range, beyond the raw baseline's own rise. */
  readonly verdict: "linear or better" | "superlinear" | "too few points";
}

/** One series of a run. */
export interface ScalingSeries {
  /** What is measured, in a few words. */
  readonly title: string;
  /** What x counts. */
  readonly xLabel: string;
  /** How values relate to x. */
  readonly cost: CostKind;
  /** How each value sums up its reps (minimum, median), and of how many. */
  readonly estimator: string;
  /** The points, by ascending x. */
  readonly points: ScalingPoint[];
  /** Sizes skipped (over a device limit, or `MAX_BYTES`), and other remarks. */
  readonly notes: string[];
  /** The growth check. */
  growth?: Growth;
}

/** `scaling.json`. */
export interface ScalingFile {
  /** The adapter's description. */
  readonly adapter: string;
  /** True on a software adapter. */
  readonly fallback: boolean;
  /** Deno's version. */
  readonly deno: string;
  /** When the run ended (ISO). */
  readonly date: string;
  /** Seconds the run took. */
  readonly seconds: number;
  /** The environment knobs it ran with. */
  readonly knobs: Record<string, string>;
  /** The series, by name. */
  readonly series: Record<string, ScalingSeries>;
}

/** A rise of the cost per unit above this (beyond the raw baseline's own) is superlinear growth. */
export const LIMIT = 2;

/** The cost of one unit of work at a point's value. */
export function perUnit(cost: CostKind, value: number, x: number): number {
  return cost === "total" ? value / x : cost === "per-unit" ? value : 1 / value;
}

function slope(xs: number[], ys: number[]): number {
  const lx = xs.map(Math.log);
  const ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / lx.length;
  const my = ly.reduce((a, b) => a + b, 0) / ly.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < lx.length; i++) {
    num += (lx[i]! - mx) * (ly[i]! - my);
    den += (lx[i]! - mx) ** 2;
  }
  return num / den;
}

function rise(units: number[]): number {
  let worst = 0;
  let lowest = Infinity;
  for (const u of units) {
    if (lowest < Infinity) worst = Math.max(worst, u / lowest);
    lowest = Math.min(lowest, u);
  }
  return worst;
}

/** Growth of one side's points: end-to-end ratio, worst rise and slope, or null with fewer than two points. */
function sideGrowth(
  s: ScalingSeries,
  side: "runtime" | "raw",
): { ratio: number; rise: number; slope: number } | null {
  const pts = s.points.filter((p) => p[side] !== null && p[side]! > 0);
  if (pts.length < 2) return null;
  const units = pts.map((p) => perUnit(s.cost, p[side]!, p.x));
  return {
    ratio: units[units.length - 1]! / units[0]!,
    rise: rise(units),
    slope: slope(pts.map((p) => p.x), units.map((u, i) => u * pts[i]!.x)),
  };
}

/**
 * The growth check of a series: the runtime's cost per unit is superlinear
 * when its worst rise exceeds `LIMIT` and, where a raw baseline was measured,
 * exceeds `LIMIT` times the raw baseline's own worst rise.
 */
export function growthOf(s: ScalingSeries): Growth {
  const rt = sideGrowth(s, "runtime");
  const raw = sideGrowth(s, "raw");
  if (rt === null) {
    return {
      runtime: NaN,
      raw: raw?.ratio ?? null,
      runtimeRise: NaN,
      rawRise: raw?.rise ?? null,
      runtimeSlope: NaN,
      rawSlope: raw?.slope ?? null,
      verdict: "too few points",
    };
  }
  const superlinear = rt.rise > LIMIT && (raw === null || rt.rise / Math.max(raw.rise, 1) > LIMIT);
  return {
    runtime: rt.ratio,
    raw: raw?.ratio ?? null,
    runtimeRise: rt.rise,
    rawRise: raw?.rise ?? null,
    runtimeSlope: rt.slope,
    rawSlope: raw?.slope ?? null,
    verdict: superlinear ? "superlinear" : "linear or better",
  };
}

/** x as a table or an axis writes it: bytes in KiB/MiB/GiB, counts with k. */
export function showX(x: number, xLabel: string): string {
  if (xLabel === "bytes") {
    for (const [unit, size] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]] as const) {
      if (x >= size && x % size === 0) return `${x / size} ${unit}`;
    }
    return `${x} B`;
  }
  return x >= 1000 && x % 1000 === 0 ? `${x / 1000}k` : String(x);
}

/** A value with three significant digits. */
export function showValue(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return "–";
  if (v >= 1000) return v.toFixed(0);
  return v.toPrecision(3);
}

const pad = (s: string, n: number) => s.padStart(n);

/** The series' table, its notes and its growth check, as printed. */
export function formatSeries(name: string, s: ScalingSeries): string {
  const unit = s.points[0]?.unit ?? "";
  const lines = [`${name}: ${s.title} (${unit}; ${s.estimator})`];
  lines.push(`  ${pad(s.xLabel, 18)} ${pad("runtime", 10)} ${pad("raw", 10)} ${pad("runtime/raw", 12)}`);
  for (const p of s.points) {
    const ratio = p.runtime !== null && p.raw !== null ? p.runtime / p.raw : null;
    lines.push(
      `  ${pad(showX(p.x, s.xLabel), 18)} ${pad(showValue(p.runtime), 10)} ${pad(showValue(p.raw), 10)} ${
        pad(ratio === null ? "–" : ratio.toFixed(2), 12)
      }`,
    );
  }
  for (const n of s.notes) lines.push(`  note: ${n}`);
  const g = s.growth;
  if (g !== undefined && g.verdict !== "too few points") {
    const f = (v: number | null) => v === null ? "–" : `${v.toFixed(2)}×`;
    const sl = (v: number | null) => v === null ? "–" : v.toFixed(2);
    lines.push(
      `  growth of the cost per unit, largest ÷ smallest x: runtime ${f(g.runtime)}, raw ${f(g.raw)}; ` +
        `worst rise: runtime ${f(g.runtimeRise)}, raw ${f(g.rawRise)}; ` +
        `log-log slope of the total: runtime ${sl(g.runtimeSlope)}, raw ${sl(g.rawSlope)} → ${g.verdict}`,
    );
  } else if (g !== undefined) {
    lines.push(`  growth: ${g.verdict}`);
  }
  return lines.join("\n");
}
