/**
 * Acceptance bench of the autotuned matmul. For each shape: tune it afresh
 * (memory store) and time the decision; then measure every candidate
 * exhaustively (device time, median of several dispatches) and compare the
 * tuner's pick with the best; print TFLOP/s, and tfjs-backend-webgpu's
 * `matMul` beside it when tfjs can be loaded. Ends with the acceptance lines
 * (pick within 5% of the best, tuning under 2 s, ≥ 15 TFLOP/s at 4096³).
 *
 * A script (it runs at load, also under `deno bench`):
 *   deno run --allow-env --allow-read bench/autotune_bench.ts
 * Environment: SIZES=1024,2048,4096 (default; 64,128,256 on a software
 * adapter), TARGET_MS=150 (device time per candidate and shape), OUT=dir
 * (also write dir/autotune_bench.json), TFJS=path of a tfjs bundle,
 * PRECOMPILE=0 to count pipeline compilation in the first shape's tuning time
 * (by default every candidate is compiled first, and that time is printed).
 *
 * tfjs, bench-only and never a dependency of the module, is loaded from
 * `TFJS` (default `.device/tfjs.bundle.js`: a 1.5 MB single file that runs
 * with no network, small enough to carry to a machine without one), else
 * from `npm:` specifiers (needs the npm registry or a cache); when neither
 * loads, its column says so. Make the bundle (`.device/` is ignored by git
 * and by `deno check`):
 *   mkdir -p .device && echo 'export * as tf from "npm:@tensorflow/tfjs-core@4.22.0";
 *     import "npm:@tensorflow/tfjs-backend-webgpu@4.22.0";' > .device/tfjs_entry.ts
 *   deno bundle .device/tfjs_entry.ts -o .device/tfjs.bundle.js
 *
 * @module
 */

import { createClient, type Handle } from "../mod.ts";
import { defineMatmulSet, type MatmulInput } from "../examples/_matmul_set.ts";
import { median } from "./_raw.ts";

const env = (k: string) =>
  Deno.permissions.querySync({ name: "env", variable: k }).state === "granted" ? Deno.env.get(k) : undefined;

const client = await createClient({ tuneCache: "memory" });
const { identity } = client.properties;
const software = identity.isFallbackAdapter || /llvmpipe|lavapipe|swiftshader/i.test(identity.description);
const sizes = (env("SIZES") ?? (software ? "64,128,256" : "1024,2048,4096")).split(",").map(Number);
const TARGET_MS = Number(env("TARGET_MS") ?? 150);
console.log(`${identity.description}; Deno ${Deno.version.deno}; timing ${client.properties.timingMethod}`);

/** tfjs's matMul, or why it is unavailable. */
// deno-lint-ignore no-explicit-any
async function loadTfjs(): Promise<{ tf: any } | string> {
  const bundle = env("TFJS") ?? ".device/tfjs.bundle.js";
  const tries = [
    async () => (await import(new URL(bundle, `file://${Deno.cwd()}/`).href)).tf,
    async () => {
      const specs = ["npm:@tensorflow/tfjs-core@4.22.0", "npm:@tensorflow/tfjs-backend-webgpu@4.22.0"];
      const [core] = await Promise.all(specs.map((s) => import(s)));
      return core;
    },
  ];
  const why: string[] = [];
  for (const t of tries) {
    try {
      const tf = await t();
      if (!(await tf.setBackend("webgpu"))) throw new Error("setBackend('webgpu') returned false");
      await tf.ready();
      return { tf };
    } catch (e) {
      why.push(e instanceof Error ? e.message.split("\n")[0]! : String(e));
    }
  }
  return `tfjs not loaded (${why.join("; ")})`;
}
const tfjs = await loadTfjs();
if (typeof tfjs === "string") console.log(tfjs);

function random(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** Median device milliseconds of one candidate's dispatch, or undefined when it fails. */
async function measure(run: () => unknown): Promise<number | undefined> {
  try {
    const warm = await client.profile(run);
    const est = Math.max(warm.nanos / 1e6, 1e-3);
    const reps = Math.max(3, Math.min(30, Math.round(TARGET_MS / est)));
    const p = await client.profile(async () => {
      for (let r = 0; r < reps; r++) await run();
    });
    return median(p.dispatches.map((d) => (d.end - d.start) / 1e6));
  } catch {
    return undefined;
  }
}

const set = defineMatmulSet(client);

/** Compiles every candidate's pipeline (a launch in skip mode), so tuning times exclude compilation. */
async function compileAll(input: MatmulInput): Promise<number> {
  const t0 = performance.now();
  const compiler = defineMatmulSet(client, {
    launch: (kernel, _cfg, count, x) =>
      client.launch(kernel, count, [x.a, x.b, x.c], new Uint32Array([x.m, x.n, x.k]), { mode: "skip" }),
  });
  for (const c of compiler.candidates) {
    try {
      await c.run(input);
    } catch {
      // a shape it does not support: compiled with the next one, or never needed
    }
  }
  await client.flush().catch(() => {}); // waits for the pipelines' validation; a failed compile is the tuner's to report
  return performance.now() - t0;
}
const PRECOMPILE = env("PRECOMPILE") !== "0";
const tuner = client.server.tuner; // the client is made with tuneCache "memory": every shape tunes afresh
interface Row {
  size: number;
  pick: string;
  pickMs: number;
  best: string;
  bestMs: number;
  tuneMs: number;
  rounds: number;
  tfjsMs?: number;
  all: Record<string, number | null>;
}
const rows: Row[] = [];
const tf = (size: number, ms: number) => (2 * size ** 3) / ms / 1e9;
for (const size of sizes) {
  const [m, n, k] = [size, size, size];
  const a = random(m * k, 1);
  const b = random(k * n, 2);
  const handles: Handle[] = [client.create(a), client.create(b), client.empty(m * n * 4)];
  const [ha, hb, hc] = handles as [Handle, Handle, Handle];
  const input: MatmulInput = { a: ha, b: hb, c: hc, m, n, k };
  if (PRECOMPILE && rows.length === 0) {
    console.log(
      `compiled ${set.candidates.length} candidates in ${(await compileAll(input)).toFixed(0)} ms (once per process)`,
    );
  }
  await client.sync();
  const t0 = performance.now();
  await client.autotune(set, input);
  const tuneMs = performance.now() - t0;
  const d = tuner.decision(set, input)!;
  const all: Record<string, number | null> = {};
  for (const c of set.candidates) {
    all[c.name] = (await measure(() => c.run(input))) ?? null; // null: failed, or the shape is not supported
  }
  const measured = Object.entries(all).filter((e): e is [string, number] => e[1] !== null);
  const [best, bestMs] = measured.reduce((x, y) => (y[1] < x[1] ? y : x));
  let tfjsMs: number | undefined;
  if (typeof tfjs !== "string") {
    const t = tfjs.tf;
    const [ta, tb] = [t.tensor2d(a, [m, k]), t.tensor2d(b, [k, n])];
    for (let i = 0; i < 2; i++) {
      const c = t.matMul(ta, tb);
      await c.data();
      c.dispose();
    }
    const kms: number[] = [];
    for (let i = 0; i < 5; i++) kms.push((await t.time(() => t.matMul(ta, tb))).kernelMs);
    tfjsMs = median(kms);
    ta.dispose();
    tb.dispose();
  }
  const row: Row = {
    size,
    pick: d.winner,
    pickMs: all[d.winner] ?? NaN,
    best,
    bestMs,
    tuneMs,
    rounds: d.rounds,
    ...(tfjsMs !== undefined ? { tfjsMs } : {}),
    all,
  };
  rows.push(row);
  console.log(
    `${`${size}³`.padEnd(6)} pick ${row.pick.padEnd(24)} ${row.pickMs.toFixed(3)} ms ${
      tf(size, row.pickMs).toFixed(2)
    } TFLOP/s | best ${best} ${bestMs.toFixed(3)} ms (pick at ${(100 * row.pickMs / bestMs).toFixed(1)}%) | tuned in ${
      tuneMs.toFixed(0)
    } ms, ${d.rounds} rounds${
      tfjsMs === undefined ? "" : ` | tfjs ${tfjsMs.toFixed(3)} ms ${tf(size, tfjsMs).toFixed(2)} TFLOP/s`
    }`,
  );
  for (const h of handles) h.release();
}

console.log("\nevery candidate, median device ms:");
console.log(`${"kernel".padEnd(26)}${rows.map((r) => `${r.size}³`.padStart(12)).join("")}`);
for (const c of set.candidates) {
  const cells = rows.map((r) => (r.all[c.name] === null ? "—" : r.all[c.name]!.toFixed(3)).padStart(12));
  console.log(`${c.name.padEnd(26)}${cells.join("")}`);
}
console.log("\nacceptance:");
for (const r of rows) {
  const within = r.pickMs <= r.bestMs * 1.05;
  console.log(
    `  ${r.size}³: pick within 5% of the best: ${within ? "yes" : "NO"}; tuning under 2 s: ${
      r.tuneMs < 2000 ? "yes" : "NO"
    }`,
  );
}
const big = rows.find((r) => r.size === 4096);
if (big !== undefined) {
  console.log(
    `  4096³: ${tf(4096, big.pickMs).toFixed(2)} TFLOP/s (target ≥ 15): ${tf(4096, big.pickMs) >= 15 ? "yes" : "NO"}`,
  );
}
const out = env("OUT");
if (out !== undefined) {
  await Deno.writeTextFile(
    `${out}/autotune_bench.json`,
    JSON.stringify({ adapter: identity.description, rows }, null, 1),
  );
}
client.destroy();
