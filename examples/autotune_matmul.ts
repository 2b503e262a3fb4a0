/**
 * Autotuned f32 matmul: tunes the matmul set (11 kernels: register-blocked
 * 128×128 / 128×64 / 64×64 tiles with BK 8 or 16, 8×8 or 4×4 per invocation,
 * vec4 or scalar loads, double-buffered or not, plus tiled and naive) for
 * three shapes, prints what it chose, how long the decision took and the
 * winner's TFLOP/s, and checks the product on sampled entries.
 *
 * Decisions persist in `localStorage` (shared by `deno run`, `deno test` and
 * `deno bench` of this project): a second run reuses them at once. Set
 * `TUNE_CACHE=memory` to tune afresh, or a file path for a JSON cache.
 *
 *   deno run --allow-env examples/autotune_matmul.ts
 *   SIZES=1024,2048,4096 TUNE_CACHE=memory deno run --allow-env examples/autotune_matmul.ts
 *
 * `client.autotune(set, input)` decides once per key and device, then runs the
 * winner; `client.server.tuner.decision(set, input)` tells what it chose.
 *
 * @module
 */

import { createClient, type Handle } from "../mod.ts";
import { defineMatmulSet } from "./_matmul_set.ts";

const env = (k: string) =>
  Deno.permissions.querySync({ name: "env", variable: k }).state === "granted" ? Deno.env.get(k) : undefined;

const cache = env("TUNE_CACHE") ?? "local-storage";
const client = await createClient({ tuneCache: cache, logger: { autotune: "basic", sink: "stdout" } });
const { identity } = client.properties;
const software = identity.isFallbackAdapter || /llvmpipe|lavapipe|swiftshader/i.test(identity.description);
const sizes = (env("SIZES") ?? (software ? "64,128,256" : "1024,2048,4096")).split(",").map(Number);
console.log(`${identity.description}${software ? " (software adapter)" : ""}; decisions in ${cache}`);

const tuner = client.server.tuner;
const set = defineMatmulSet(client);

function random(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

let failures = 0;
for (const size of sizes) {
  const [m, n, k] = [size, size, size];
  const a = random(m * k, 1);
  const b = random(k * n, 2);
  const handles: Handle[] = [client.create(a), client.create(b), client.empty(m * n * 4)];
  const [ha, hb, hc] = handles as [Handle, Handle, Handle];
  const input = { a: ha, b: hb, c: hc, m, n, k };

  const known = tuner.decision(set, input) !== undefined; // a smaller shape of the same key was tuned
  const t0 = performance.now();
  await client.autotune(set, input);
  const tuneMs = performance.now() - t0;
  const d = tuner.decision(set, input)!;

  const reps = software ? 3 : 20;
  const p = await client.profile(async () => {
    for (let r = 0; r < reps; r++) await client.autotune(set, input);
  });
  const times = p.dispatches.map((x) => x.end - x.start).sort((x, y) => x - y);
  const median = times[times.length >> 1]!;
  const tflops = (2 * m * n * k) / median / 1e3;

  const bytes = await client.read(hc);
  const got = new Float32Array(bytes.buffer, bytes.byteOffset, m * n);
  let worst = 0;
  for (let t = 0, s = 7; t < 64; t++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const [i, j] = [s % m, (s >>> 8) % n];
    let [sum, abs] = [0, 0];
    for (let q = 0; q < k; q++) {
      const x = a[i * k + q]! * b[q * n + j]!;
      sum += x;
      abs += Math.abs(x);
    }
    worst = Math.max(worst, Math.abs(got[i * n + j]! - sum) / abs);
  }
  if (!(worst < 1e-5)) failures++;
  const how = known
    ? `decided for key ${d.key}`
    : d.source === "tuned"
    ? `tuned in ${tuneMs.toFixed(0)} ms, ${d.rounds} rounds`
    : `${d.source}, ${tuneMs.toFixed(0)} ms`;
  console.log(
    `${`${size}³`.padEnd(6)} → ${d.winner.padEnd(24)} ${(median / 1e6).toFixed(3)} ms  ${
      tflops.toFixed(tflops < 1 ? 3 : 2)
    } TFLOP/s  (${how}; check ${worst < 1e-5 ? "ok" : `FAILED, relative error ${worst}`})`,
  );
  for (const h of handles) h.release();
}
client.destroy();
if (failures > 0) Deno.exit(1);
