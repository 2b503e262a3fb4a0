/**
 * Draws the README's figures from `bench/figures.json` (the latest H200
 * figures, copied there from the `bench/RESULTS.md` entry they come from):
 * `docs/figures.svg`, one panel per measure with a bar for each of raw
 * WebGPU, this runtime, tfjs-webgpu and PyTorch (log scale, so a 20× gap
 * stays readable), and the README's figures table, between its
 * `<!-- figures -->` markers. `tests/docs_test.ts` checks that both are what
 * this script makes of the JSON.
 *
 * Run: `deno run --allow-read --allow-write bench/chart.ts` (after editing
 * `bench/figures.json`).
 *
 * @module
 */

/** One measure of the figures. */
export interface FigureRow {
  /** What is measured, for the table and the panel's title. */
  readonly measure: string;
  /** Unit of the values. */
  readonly unit: string;
  /** True when a smaller value is better (times), false for rates. */
  readonly lowerIsBetter: boolean;
  /** The figure of each contender, or null when not measured. */
  readonly raw: number | null;
  /** This runtime. */
  readonly runtime: number | null;
  /** tfjs-backend-webgpu. */
  readonly tfjs: number | null;
  /** PyTorch (CUDA) on the same machine. */
  readonly pytorch: number | null;
  /** How each was measured, in a few words. */
  readonly note: string;
}

/** `bench/figures.json`. */
export interface Figures {
  /** When the figures were measured (ISO date). */
  readonly date: string;
  /** Where: GPU, driver, Deno, PyTorch and tfjs versions. */
  readonly machine: string;
  /** The `bench/RESULTS.md` entry the figures come from. */
  readonly source: string;
  /** How to measure them again. */
  readonly rerun: string;
  /** The measures. */
  readonly rows: readonly FigureRow[];
}

const CONTENDERS = [
  ["raw", "raw WebGPU", "#8a8a8a"],
  ["runtime", "@denogpu/runtime", "#2f6fdb"],
  ["tfjs", "tfjs-webgpu 4.22", "#e08a1e"],
  ["pytorch", "PyTorch (CUDA)", "#c0392b"],
] as const;

/** A number with three significant digits at most, as the table and chart print it. */
export function show(v: number | null): string {
  if (v === null) return "–";
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1).replace(/\.0$/, "");
  if (v >= 1) return v.toFixed(2).replace(/0$/, "").replace(/\.0$/, "");
  return v.toPrecision(2);
}

/** The README's figures block (the table and its caption), between its markers. */
export function figuresTable(f: Figures): string {
  const lines = [
    `On an ${f.machine}, ${f.date}, each figure measured in one process next to its baseline (${f.source} of the`,
    "repository's `bench/RESULTS.md`; lower is better except TFLOP/s):",
    "",
    "| measure | raw WebGPU | @denogpu/runtime | tfjs-webgpu | PyTorch | how |",
    "| --- | --- | --- | --- | --- | --- |",
    ...f.rows.map((r) =>
      `| ${r.measure} (${r.unit}) | ${show(r.raw)} | **${show(r.runtime)}** | ${show(r.tfjs)} | ${
        show(r.pytorch)
      } | ${r.note} |`
    ),
    "",
    `To measure them again on your GPU: ${f.rerun}.`,
  ];
  return lines.join("\n");
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The chart: one panel per row, a log-scale bar per contender. */
export function figuresSvg(f: Figures): string {
  const panelW = 460;
  const barH = 18;
  const gap = 6;
  const left = 150;
  const panelH = 30 + CONTENDERS.length * (barH + gap) + 10;
  const cols = 2;
  const rows = Math.ceil(f.rows.length / cols);
  const width = cols * panelW + 20;
  const height = 50 + rows * panelH + 40;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(`@denogpu/runtime, ${f.date}`)}</text>`,
    `<text x="10" y="40" fill="#555" font-size="10.5">${
      esc(`${f.machine}; log scale; lower is better except TFLOP/s; – not measured`)
    }</text>`,
  ];
  f.rows.forEach((r, i) => {
    const x0 = 10 + (i % cols) * panelW;
    const y0 = 50 + Math.floor(i / cols) * panelH;
    const values = CONTENDERS.map(([k]) => r[k]).filter((v): v is number => v !== null && v > 0);
    const lo = Math.log10(Math.min(...values)) - 0.3;
    const hi = Math.log10(Math.max(...values)) + 0.1;
    const scale = (v: number) => ((Math.log10(v) - lo) / (hi - lo)) * (panelW - left - 70);
    out.push(`<text x="${x0}" y="${y0 + 18}" font-weight="bold">${esc(`${r.measure} (${r.unit})`)}</text>`);
    CONTENDERS.forEach(([k, name, color], j) => {
      const y = y0 + 28 + j * (barH + gap);
      const v = r[k];
      out.push(`<text x="${x0}" y="${y + 13}" fill="#333">${esc(name)}</text>`);
      if (v === null || v <= 0) {
        out.push(`<text x="${x0 + left}" y="${y + 13}" fill="#999">–</text>`);
        return;
      }
      const w = Math.max(2, scale(v));
      out.push(`<rect x="${x0 + left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color}"/>`);
      out.push(
        `<text x="${(x0 + left + w + 5).toFixed(1)}" y="${y + 13}" fill="#111"${
          k === "runtime" ? ' font-weight="bold"' : ""
        }>${esc(show(v))}</text>`,
      );
    });
  });
  out.push(`<text x="10" y="${height - 14}" fill="#555">${esc(`${f.source}; rerun: ${f.rerun}`)}</text>`);
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** The README with its figures block replaced. */
export function withFiguresTable(readme: string, f: Figures): string {
  const start = "<!-- figures -->";
  const end = "<!-- /figures -->";
  const a = readme.indexOf(start);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) throw new Error(`README.md has no ${start} ... ${end} block`);
  return `${readme.slice(0, a + start.length)}\n\n${figuresTable(f)}\n\n${readme.slice(b)}`;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  const f = JSON.parse(await Deno.readTextFile(new URL("bench/figures.json", root))) as Figures;
  await Deno.writeTextFile(new URL("docs/figures.svg", root), figuresSvg(f));
  const readme = new URL("README.md", root);
  await Deno.writeTextFile(readme, withFiguresTable(await Deno.readTextFile(readme), f));
  console.log("chart: wrote docs/figures.svg and the README's figures table");
}
