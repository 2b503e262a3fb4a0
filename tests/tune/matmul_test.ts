/**
 * The autotune example's matmul: every kernel matches a float64 reference on
 * llvmpipe (aligned, unaligned and odd shapes, within the loop budget), and a
 * tuner over a real client picks one and computes the product with it.
 */

import assert from "node:assert/strict";
import { type ComputeClient, createClient, type Handle } from "../../mod.ts";
import { profileMeasurer, Tuner } from "../../tune.ts";
import {
  MATMUL_CANDIDATES,
  matmulLoopIterations,
  type MatmulShape,
  matmulSupports,
} from "../../examples/_matmul_kernels.ts";
import { defineMatmulSet, type MatmulInput } from "../../examples/_matmul_set.ts";
import { checkLoopBudget } from "../_loop_budget.ts";

function random(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** Worst |got − A·B| / Σ|a·b| over all entries. */
function relativeError(a: Float32Array, b: Float32Array, got: Float32Array, { m, n, k }: MatmulShape): number {
  let worst = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let abs = 0;
      for (let p = 0; p < k; p++) {
        const x = a[i * k + p]! * b[p * n + j]!;
        sum += x;
        abs += Math.abs(x);
      }
      const e = Math.abs(got[i * n + j]! - sum) / abs;
      worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
    }
  }
  return worst;
}

/** A set whose launches are checked against llvmpipe's loop limit. */
function budgetedSet(client: ComputeClient) {
  return defineMatmulSet(client, {
    launch: (kernel, cfg, count, x) => {
      checkLoopBudget({ kernel, iterations: () => matmulLoopIterations(cfg, x) }, count);
      client.launch(kernel, count, [x.a, x.b, x.c], new Uint32Array([x.m, x.n, x.k]));
    },
  });
}

async function withProblem(
  client: ComputeClient,
  shape: MatmulShape,
  fn: (input: MatmulInput, check: () => Promise<number>) => Promise<void>,
): Promise<void> {
  const a = random(shape.m * shape.k, 1);
  const b = random(shape.k * shape.n, 2);
  const handles: Handle[] = [client.create(a), client.create(b), client.empty(shape.m * shape.n * 4)];
  const [ha, hb, hc] = handles as [Handle, Handle, Handle];
  try {
    await fn({ ...shape, a: ha, b: hb, c: hc }, async () => {
      const bytes = await client.read(hc);
      return relativeError(a, b, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), shape);
    });
  } finally {
    for (const h of handles) h.release();
  }
}

Deno.test("every matmul kernel matches a float64 reference at 64³, 96×80×48, 128³ and 67×93×45", async () => {
  const client = await createClient();
  try {
    const set = budgetedSet(client);
    assert.ok(set.candidates.length >= 8);
    for (
      const shape of [{ m: 64, n: 64, k: 64 }, { m: 96, n: 80, k: 48 }, { m: 128, n: 128, k: 128 }, {
        m: 67,
        n: 93,
        k: 45,
      }]
    ) {
      await withProblem(client, shape, async (input, check) => {
        for (const [i, cfg] of MATMUL_CANDIDATES.entries()) {
          const candidate = set.candidates[i]!;
          if (!matmulSupports(cfg, shape)) {
            assert.throws(() => candidate.run(input), /multiples of 4/);
            continue;
          }
          await candidate.run(input);
          const err = await check();
          assert.ok(err < 1e-5, `${cfg.name} at ${shape.m}x${shape.n}x${shape.k}: relative error ${err}`);
        }
      });
    }
  } finally {
    client.destroy();
  }
});

Deno.test("the tuner picks a matmul kernel on a real client and its product is right; vec4 kernels skip odd shapes", async () => {
  const client = await createClient();
  try {
    const set = budgetedSet(client);
    const tuner = new Tuner({ measurer: profileMeasurer(client), log: () => {} });
    await withProblem(client, { m: 128, n: 128, k: 128 }, async (input, check) => {
      await tuner.tune(set, input);
      const d = tuner.decision(set, input)!;
      assert.equal(d.source, "tuned");
      assert.equal(d.results.filter((r) => r.status === "failed").length, 0, JSON.stringify(d.results));
      assert.ok(await check() < 1e-5);
    });
    await withProblem(client, { m: 40, n: 30, k: 22 }, async (input, check) => {
      await tuner.tune(set, input);
      const d = tuner.decision(set, input)!;
      const skipped = d.results.filter((r) => r.status === "skipped").map((r) => r.name);
      assert.deepEqual(skipped, MATMUL_CANDIDATES.filter((c) => c.vec === 4).map((c) => c.name));
      assert.ok(await check() < 1e-5);
    });
  } finally {
    client.destroy();
  }
});
