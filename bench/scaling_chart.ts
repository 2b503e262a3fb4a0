/**
 * Draws how cost grows with work from one or more `scaling.json` files
 * (written by `scaling.ts` with `OUT=dir`): one small log-log panel per
 * series, x the work and y the series' value, the runtime as solid lines and
 * raw WebGPU as dashed ones, one colour per adapter, with each adapter's
 * growth check under the panel's title (the worst rise of the cost per unit
 * of work across the range, `_scaling_report.ts`). A hand-written SVG, like
 * `chart.ts`'s.
 *
 * Arguments: `LABEL=path` (or a bare path, labelled with the file's
 * adapter), one per adapter; `SVG` (env) is where the chart goes, by default
 * `docs/scaling.svg`.
 *
 * Run: `deno run --allow-read --allow-write --allow-env bench/scaling_chart.ts H200=a/scaling.json LLVMPIPE=b/scaling.json`.
 *
 * @module
 */

import { type ScalingFile, type ScalingSeries, showValue, showX } from "./_scaling_report.ts";

/** One adapter's run, as the chart labels it. */
export interface LabelledRun {
  /** The legend's name for it. */
  readonly label: string;
  /** Its `scaling.json`. */
  readonly file: ScalingFile;
}

/** Series in the order `scaling.ts` runs them; others follow in their files' order. */
const ORDER = ["launch_bindings", "launch_info", "alloc", "replay", "write", "read", "allreduce_2", "allreduce_4"];
const COLORS = ["#2f6fdb", "#e08a1e", "#2a9d5b", "#c0392b"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const f1 = (v: number) => v.toFixed(1);

/** Powers of ten inside `[lo, hi]`, with 2 and 5 (or every digit) between while fewer than three fall inside. */
function ticks(lo: number, hi: number): number[] {
  let out: number[] = [];
  for (const steps of [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
    out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of steps) {
        const v = m * 10 ** e;
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
      }
    }
    if (out.length >= 3) break;
  }
  return out;
}

/** At most `chars` characters of `s`, with an ellipsis when cut. */
const fit = (s: string, chars: number) => s.length <= chars ? s : `${s.slice(0, chars - 1)}…`;

/** A tick's label: plain for 0.01 to 99,999, else in powers of ten. */
function tickLabel(v: number): string {
  if (v >= 0.01 && v < 100_000) return Number(v.toPrecision(2)).toString();
  const e = Math.floor(Math.log10(v));
  const m = Math.round(v / 10 ** e);
  return m === 1 ? `1e${e}` : `${m}e${e}`;
}

function growthLine(runs: readonly LabelledRun[], name: string): string {
  const parts: string[] = [];
  for (const r of runs) {
    const g = r.file.series[name]?.growth;
    if (g === undefined || g.verdict === "too few points") continue;
    const x = (v: number) => `${Number(v.toPrecision(2))}×`;
    const raw = g.rawRise === null ? "" : ` (raw ${x(g.rawRise)})`;
    parts.push(`${r.label} ${x(g.runtimeRise)}${raw}${g.verdict === "superlinear" ? " SUPERLINEAR" : ""}`);
  }
  return parts.length === 0 ? "" : `worst rise of cost per unit: ${parts.join("; ")}`;
}

/** One panel at (x0, y0). */
function panel(runs: readonly LabelledRun[], name: string, x0: number, y0: number, w: number, h: number): string[] {
  const out: string[] = [];
  const series = runs.map((r) => r.file.series[name]).filter((s): s is ScalingSeries => s !== undefined);
  const first = series[0]!;
  const unit = first.points[0]?.unit ?? "";
  out.push(`<text x="${x0}" y="${y0 + 14}" font-weight="bold">${esc(name)}</text>`);
  out.push(`<text x="${x0}" y="${y0 + 27}" fill="#333" font-size="10">${esc(fit(first.title, 72))}</text>`);
  out.push(`<text x="${x0}" y="${y0 + 39}" fill="#555" font-size="9">${esc(fit(growthLine(runs, name), 88))}</text>`);
  const left = x0 + 52;
  const top = y0 + 48;
  const pw = w - 70;
  const ph = h - 88;
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const ys = series.flatMap((s) => s.points.flatMap((p) => [p.runtime, p.raw]))
    .filter((v): v is number => v !== null && v > 0);
  if (xs.length === 0 || ys.length === 0) {
    out.push(`<text x="${left}" y="${top + ph / 2}" fill="#999">no points</text>`);
    return out;
  }
  const [xlo, xhi] = [Math.min(...xs), Math.max(...xs)];
  // At least a factor of 4 from bottom to top, so that noise on a flat line does not look like growth.
  const spread = Math.max((Math.max(...ys) / Math.min(...ys)) * 1.7, 4);
  const mid = Math.sqrt(Math.max(...ys) * Math.min(...ys));
  const [ylo, yhi] = [mid / Math.sqrt(spread), mid * Math.sqrt(spread)];
  const lx = (x: number) => left + (xhi === xlo ? pw / 2 : ((Math.log(x) - Math.log(xlo)) / Math.log(xhi / xlo)) * pw);
  const ly = (y: number) => top + ph - ((Math.log(y) - Math.log(ylo)) / Math.log(yhi / ylo)) * ph;
  out.push(`<rect x="${left}" y="${top}" width="${pw}" height="${ph}" fill="none" stroke="#bbb"/>`);
  for (const t of ticks(ylo, yhi)) {
    const y = f1(ly(t));
    out.push(`<line x1="${left}" y1="${y}" x2="${left + pw}" y2="${y}" stroke="#eee"/>`);
    out.push(`<text x="${left - 4}" y="${y}" dy="3" text-anchor="end" font-size="10">${esc(tickLabel(t))}</text>`);
  }
  const xTicks = [...new Set(xs)].sort((a, b) => a - b);
  // Labels at least 42 px apart, the last one always (its neighbour dropped when too close).
  const labelled: number[] = [];
  for (const t of xTicks) {
    if (labelled.length === 0 || lx(t) - lx(labelled.at(-1)!) >= 42) labelled.push(t);
  }
  const last = xTicks.at(-1)!;
  if (labelled.at(-1) !== last) {
    if (lx(last) - lx(labelled.at(-1)!) < 42) labelled.pop();
    labelled.push(last);
  }
  for (const t of xTicks) {
    const x = f1(lx(t));
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + ph}" stroke="#f3f3f3"/>`);
    if (labelled.includes(t)) {
      out.push(
        `<text x="${x}" y="${top + ph + 13}" text-anchor="middle" font-size="9">${esc(showX(t, first.xLabel))}</text>`,
      );
    }
  }
  out.push(
    `<text x="${left + pw / 2}" y="${top + ph + 27}" text-anchor="middle" fill="#555" font-size="10">${
      esc(first.xLabel)
    }</text>`,
  );
  out.push(
    `<text x="${x0 + 10}" y="${top + ph / 2}" transform="rotate(-90 ${x0 + 10} ${
      top + ph / 2
    })" text-anchor="middle" fill="#555" font-size="10">${esc(unit)}</text>`,
  );
  runs.forEach((r, k) => {
    const s = r.file.series[name];
    if (s === undefined) return;
    const color = COLORS[k % COLORS.length]!;
    for (const side of ["raw", "runtime"] as const) {
      const pts = s.points.filter((p) => p[side] !== null && p[side]! > 0).map((p) => [lx(p.x), ly(p[side]!)]);
      if (pts.length === 0) continue;
      const d = pts.map(([x, y], i) => `${i === 0 ? "M" : "L"}${f1(x!)},${f1(y!)}`).join(" ");
      const dash = side === "raw" ? ' stroke-dasharray="5,3"' : "";
      out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="${side === "raw" ? 1.3 : 2}"${dash}/>`);
      for (const [x, y] of pts) {
        out.push(
          `<circle cx="${f1(x!)}" cy="${f1(y!)}" r="2.6" fill="${side === "raw" ? "#fff" : color}" stroke="${color}"/>`,
        );
      }
    }
    const end = s.points.at(-1);
    if (end?.runtime != null) {
      out.push(
        `<text x="${f1(lx(end.x) + 4)}" y="${f1(ly(end.runtime) - 5)}" font-size="9" fill="${color}">${
          esc(showValue(end.runtime))
        }</text>`,
      );
    }
  });
  return out;
}

/** The chart of some runs: a legend, then one panel per series any of them holds. */
export function scalingSvg(runs: readonly LabelledRun[]): string {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.file.series)))]
    .sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99));
  const cols = 3;
  const w = 400;
  const h = 260;
  const width = cols * w + 20;
  const height = 80 + Math.ceil(names.length / cols) * h + 20;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">@denogpu/runtime: how cost grows with work</text>`,
    `<text x="10" y="40" fill="#555">${
      esc("log-log; solid: the runtime, dashed: raw WebGPU in the same process; bench/scaling.ts")
    }</text>`,
  ];
  runs.forEach((r, k) => {
    const x = 10 + k * 390;
    const color = COLORS[k % COLORS.length]!;
    out.push(`<line x1="${x}" y1="58" x2="${x + 22}" y2="58" stroke="${color}" stroke-width="2"/>`);
    out.push(
      `<text x="${x + 28}" y="62">${
        esc(`${r.label}: ${r.file.adapter}, Deno ${r.file.deno}, ${r.file.date.slice(0, 10)}`)
      }</text>`,
    );
  });
  names.forEach((name, i) => {
    out.push(...panel(runs, name, 10 + (i % cols) * w, 80 + Math.floor(i / cols) * h, w, h));
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

if (import.meta.main) {
  if (Deno.args.length === 0) {
    console.error("usage: scaling_chart.ts LABEL=path/scaling.json [LABEL=path/scaling.json ...] (env SVG=out.svg)");
    Deno.exit(2);
  }
  const runs: LabelledRun[] = [];
  for (const arg of Deno.args) {
    const eq = arg.indexOf("=");
    const path = eq < 0 ? arg : arg.slice(eq + 1);
    const file = JSON.parse(await Deno.readTextFile(path)) as ScalingFile;
    runs.push({ label: eq < 0 ? file.adapter : arg.slice(0, eq), file });
  }
  const svg = Deno.env.get("SVG") ?? "docs/scaling.svg";
  await Deno.writeTextFile(svg, scalingSvg(runs));
  console.log(`scaling_chart: wrote ${svg} (${runs.map((r) => r.label).join(", ")})`);
}
