/**
 * Summarizes `deno bench --json` output of `graph_bench.ts`: for every group
 * and case, host ns per dispatch (mean) and the ratios of the mean, minimum
 * and p75 to the raw floor of the same group and process. When several files
 * hold the same group (repeated runs), each ratio is the median over them and
 * the per-run mean ratios are listed too.
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

/** Per cell (group, case): ns per dispatch and the three ratios, one entry per run. */
const cells = new Map<
  string,
  { group: string; name: string; ns: number[]; avg: number[]; min: number[]; p75: number[] }
>();
for (const file of Deno.args) {
  const benches = (JSON.parse(Deno.readTextFileSync(file)) as { benches: BenchRecord[] }).benches;
  const floors = new Map<string, BenchStats>();
  for (const b of benches) if (b.name === FLOOR && b.results[0]?.ok) floors.set(b.group, b.results[0].ok);
  for (const b of benches) {
    const ok = b.results[0]?.ok;
    const floor = floors.get(b.group);
    if (ok === undefined || floor === undefined) {
      console.log(`${file}: ${b.group} / ${b.name}: no result`);
      continue;
    }
    const dispatches = Number(/\((\d+) dispatches/.exec(b.group)?.[1] ?? NaN);
    const key = `${b.group}\u0000${b.name}`;
    let cell = cells.get(key);
    if (cell === undefined) cells.set(key, cell = { group: b.group, name: b.name, ns: [], avg: [], min: [], p75: [] });
    cell.ns.push(ok.avg / dispatches);
    cell.avg.push(ok.avg / floor.avg);
    cell.min.push(ok.min / floor.min);
    cell.p75.push(ok.p75 / floor.p75);
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
