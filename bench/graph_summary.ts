/**
 * Summarizes `deno bench --json` output of `graph_bench.ts`: for every group
 * and case, host ns per dispatch (mean) and the ratios of the mean, minimum
 * and p75 to the raw floor of the same group and process. A group run in
 * rounds (`ROUNDS` in `graph_bench.ts`) is pooled first: its mean ratio is
 * the case's summed means over the floor's, its minimum ratio the lowest
 * minimum over the floor's, its p75 ratio the median of the rounds' ratios.
 * When several files hold the same group (repeated runs), each ratio is the
 * median over them and the per-run mean ratios are listed too.
 *
 * Run: `deno run --allow-read bench/graph_summary.ts <file.json>…` (what
 * `graph_groups.sh` does after its runs).
 *
 * @module
 */

interface BenchStats {
  avg: number;
  min: number;
  p75: number;
}
interface BenchRecord {
  group: string;
  name: string;
  results: { ok?: BenchStats }[];
}

const FLOOR = "raw WebGPU floor";
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Per cell (group, case): ns per dispatch and the three ratios, one entry per run (file). */
const cells = new Map<
  string,
  { group: string; name: string; ns: number[]; avg: number[]; min: number[]; p75: number[] }
>();
/** A group's name without its round (`graph_bench.ts` with `ROUNDS`). */
const ROUND = /, round \d+ of \d+$/;
for (const file of Deno.args) {
  const benches = (JSON.parse(Deno.readTextFileSync(file)) as { benches: BenchRecord[] }).benches;
  const floors = new Map<string, BenchStats>();
  for (const b of benches) if (b.name === FLOOR && b.results[0]?.ok) floors.set(b.group, b.results[0].ok);
  // This file's rounds of each cell, pooled: summed means, lowest minimum, p75 ratios per round.
  const pooled = new Map<
    string,
    { group: string; name: string; avg: number; floorAvg: number; min: number; floorMin: number; p75: number[] }
  >();
  for (const b of benches) {
    const ok = b.results[0]?.ok;
    const floor = floors.get(b.group);
    if (ok === undefined || floor === undefined) {
      console.log(`${file}: ${b.group} / ${b.name}: no result`);
      continue;
    }
    const group = b.group.replace(ROUND, "");
    const key = `${group}\u0000${b.name}`;
    let p = pooled.get(key);
    if (p === undefined) {
      pooled.set(key, p = { group, name: b.name, avg: 0, floorAvg: 0, min: Infinity, floorMin: Infinity, p75: [] });
    }
    p.avg += ok.avg;
    p.floorAvg += floor.avg;
    p.min = Math.min(p.min, ok.min);
    p.floorMin = Math.min(p.floorMin, floor.min);
    p.p75.push(ok.p75 / floor.p75);
  }
  for (const [key, p] of pooled) {
    const rounds = p.p75.length;
    const dispatches = Number(/\((\d+) dispatches/.exec(p.group)?.[1] ?? NaN);
    let cell = cells.get(key);
    if (cell === undefined) cells.set(key, cell = { group: p.group, name: p.name, ns: [], avg: [], min: [], p75: [] });
    cell.ns.push(p.avg / rounds / dispatches);
    cell.avg.push(p.avg / p.floorAvg);
    cell.min.push(p.min / p.floorMin);
    cell.p75.push(median(p.p75));
  }
}

const runs = Math.max(0, ...[...cells.values()].map((c) => c.avg.length));
console.log(
  `${"group".padEnd(24)} ${"case".padEnd(40)} ${"ns/disp".padStart(8)} ${"mean ×".padStart(7)} ` +
    `${"min ×".padStart(6)} ${"p75 ×".padStart(6)}${runs > 1 ? "   mean × per run" : ""}`,
);
let last = "";
for (const c of cells.values()) {
  const group = c.group.replace(/ \(.*\)$/, "");
  if (group !== last && last !== "") console.log("");
  last = group;
  const f = (x: number) => x.toFixed(2);
  console.log(
    `${group.padEnd(24)} ${c.name.slice(0, 40).padEnd(40)} ${median(c.ns).toFixed(0).padStart(8)} ` +
      `${f(median(c.avg)).padStart(7)} ${f(median(c.min)).padStart(6)} ${f(median(c.p75)).padStart(6)}` +
      (runs > 1 ? `   ${c.avg.map(f).join(" ")}` : ""),
  );
}
