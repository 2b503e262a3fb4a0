/**
 * How cost grows with work (issue 33, point 4), each series in one process
 * next to its raw WebGPU baseline on the same device:
 *
 * - `launch_bindings`: host µs per launch at 1, 4, 8 and 16 storage bindings;
 * - `launch_info`: host µs per launch with 1 to 64 info words, changing at
 *   every launch;
 * - `alloc`: µs per allocate + release with 1k, 10k and 100k allocations live;
 * - `replay`: µs per dispatch of `graph.replay()` for graphs of 10 to 100k
 *   launches;
 * - `write`, `read`: GB/s from 4 KiB to 1 GiB;
 * - `allreduce` (series `allreduce_2`, `allreduce_4`): all-reduce ms from
 *   1 MiB to 256 MiB per device over 2 and 4 logical devices.
 *
 * How each is timed, and its raw baseline, is in `_scaling_host.ts` and
 * `_scaling_io.ts`. Each series ends with its growth check
 * (`_scaling_report.ts`): the cost per unit of work (per binding or info
 * word, per allocation, per dispatch, per byte) at the largest x ÷ at the
 * smallest, its worst rise across the range, and the log-log slope of the
 * total (1 is linear); a worst rise above 2× that the raw baseline does not
 * share is reported as superlinear. Every value is the minimum over reps
 * interleaved with the raw baseline's (why: `_scaling_host.ts`).
 *
 * Env: `SERIES` (comma list of the names above; default all), `MAX_BYTES`
 * (largest transfer and all-reduce per device; default 1 GiB, or 256 MiB on
 * a fallback adapter; sizes above the device's limits are skipped with a
 * note), `QUICK=1` (fewer reps), `OUT=dir` (writes `dir/scaling.json`, which
 * `scaling_chart.ts` draws). On the software adapter set `LP_NUM_THREADS=0`
 * (see `README.md`).
 *
 * Run: `deno run --allow-env --allow-read --allow-write bench/scaling.ts`
 * (1.5 to 2.5 minutes on the 2-core VM with llvmpipe and `LP_NUM_THREADS=0`).
 * On the H200, through the `device` tool with carry `[".device"]`:
 * `source .device/setup.sh && DENO_WEBGPU_BACKEND=vulkan NO_COLOR=1 OUT=$OUT deno run --allow-env --allow-read --allow-write bench/scaling.ts 2>&1 | tee $OUT/scaling.txt`;
 * then `deno run --allow-read --allow-write --allow-env bench/scaling_chart.ts H200=<files_at>/scaling.json LLVMPIPE=<dir>/scaling.json`.
 *
 * @module
 */

import { createClient } from "../mod.ts";
import { alloc, type HostContext, launchBindings, launchInfo, LONGEST_GRAPH, replay } from "./_scaling_host.ts";
import { allReduce, type IoContext, transfers } from "./_scaling_io.ts";
import { formatSeries, growthOf, type ScalingFile, type ScalingSeries } from "./_scaling_report.ts";

const env = (k: string) =>
  Deno.permissions.querySync({ name: "env", variable: k }).state === "granted" ? Deno.env.get(k) : undefined;

const ALL = ["launch_bindings", "launch_info", "alloc", "replay", "write", "read", "allreduce"] as const;
const asked = (env("SERIES") ?? ALL.join(",")).split(",").map((s) => s.trim()).filter((s) => s !== "");
for (const s of asked) {
  if (!(ALL as readonly string[]).includes(s)) {
    throw new Error(`SERIES: unknown series "${s}" (known: ${ALL.join(", ")})`);
  }
}
const wants = (s: (typeof ALL)[number]) => asked.includes(s);
const quick = env("QUICK") === "1";

const started = performance.now();
// tasksMax above every timed loop (the longest graph included): no submit falls inside one.
const client = await createClient({ tasksMax: 2 * LONGEST_GRAPH });
const device = client.server.device;
const identity = client.properties.identity;
const maxBytes = Number(env("MAX_BYTES") ?? (identity.isFallbackAdapter ? 256 << 20 : 1 << 30));
if (!(maxBytes >= 4096)) throw new Error(`MAX_BYTES must be at least 4096, got ${env("MAX_BYTES")}`);
console.log(
  `scaling on ${identity.description || identity.vendor} (${
    identity.isFallbackAdapter ? "fallback adapter" : "hardware adapter"
  }), Deno ${Deno.version.deno}; series ${asked.join(", ")}; MAX_BYTES ${maxBytes}${quick ? "; QUICK" : ""}`,
);

const series: Record<string, ScalingSeries> = {};
const out = env("OUT");
/** Writes `OUT/scaling.json` with the series so far (after each one, so a run cut short keeps what it measured). */
const save = async (final: boolean) => {
  if (!out) return;
  const knobs: Record<string, string> = {};
  for (const k of ["SERIES", "MAX_BYTES", "QUICK", "LP_NUM_THREADS", "GLIBC_TUNABLES"]) {
    const v = env(k);
    if (v !== undefined) knobs[k] = v;
  }
  const file: ScalingFile = {
    adapter: identity.description || identity.vendor,
    fallback: identity.isFallbackAdapter,
    deno: Deno.version.deno,
    date: new Date().toISOString(),
    seconds: (performance.now() - started) / 1000,
    knobs,
    series,
  };
  await Deno.mkdir(out, { recursive: true });
  await Deno.writeTextFile(`${out}/scaling.json`, JSON.stringify(file, null, 2) + "\n");
  if (final) console.log(`wrote ${out}/scaling.json`);
};
const report = async (name: string, s: ScalingSeries, since: number) => {
  s.growth = growthOf(s);
  series[name] = s;
  console.log(`\n${formatSeries(name, s)}\n  (${((performance.now() - since) / 1000).toFixed(1)} s)`);
  await save(false);
};
const host: HostContext = { client, device, quick };
const io: IoContext = { client, device, quick, maxBytes };
let t = performance.now();
if (wants("launch_bindings")) await report("launch_bindings", await launchBindings(host), t);
t = performance.now();
if (wants("launch_info")) await report("launch_info", await launchInfo(host), t);
t = performance.now();
if (wants("alloc")) await report("alloc", alloc(host), t);
t = performance.now();
if (wants("replay")) await report("replay", await replay(host), t);
t = performance.now();
if (wants("write") || wants("read")) {
  const got = await transfers(io, { write: wants("write"), read: wants("read") });
  if (got.write) await report("write", got.write, t);
  if (got.read) await report("read", got.read, t);
}
t = performance.now();
if (wants("allreduce")) {
  for (const [name, s] of Object.entries(await allReduce(io, [2, 4]))) await report(name, s, t);
}
await client.sync();

const seconds = (performance.now() - started) / 1000;
const flagged = Object.entries(series).filter(([, s]) => s.growth?.verdict === "superlinear").map(([n]) => n);
console.log(
  `\ngrowth: ${flagged.length === 0 ? "no series grows worse than linear" : `superlinear: ${flagged.join(", ")}`}`,
);
console.log(`done in ${seconds.toFixed(1)} s`);
await save(true);
client.destroy();
Deno.exit(0);
