/**
 * Regression: the `exclusive-pages` preset computes its 24 bucket sizes as
 * `exp(ln(32 KiB) + i/23·(ln(maxPage) − ln(32 KiB)))` rounded up to the
 * alignment (contract 3.4). For the last bucket the exact value is `maxPage`
 * itself, but `exp(ln(x))` in floating point lands slightly above `x` for some
 * page sizes (2 GiB gives 2147483648.000002), and rounding that up made the top
 * bucket one alignment step larger than the largest page: with `maxPage` = 2 GiB
 * and alignment 256 the last pool served up to 2 GiB + 256 B, a size no binding
 * of the device can cover.
 */

import assert from "node:assert/strict";
import { exclusivePagesPreset } from "../../src/memory/memory_config.ts";
import type { PoolConfig } from "../../mod.ts";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

function maxAlloc(p: PoolConfig): number {
  assert.equal(p.kind, "exclusive");
  return (p as { maxAllocSize: number }).maxAllocSize;
}

Deno.test("the exclusive-pages preset's buckets run from exactly 32 KiB to exactly the largest page", () => {
  for (const maxPageSize of [128 * MiB, 256 * MiB, 1 * GiB, 2 * GiB, 4 * GiB]) {
    for (const alignment of [4, 32, 256]) {
      const pools = exclusivePagesPreset({ maxPageSize, alignment, maxBufferSize: 8 * GiB });
      const where = `maxPage ${maxPageSize}, alignment ${alignment}`;
      assert.equal(maxAlloc(pools[0]!), 32 * 1024, where);
      assert.equal(maxAlloc(pools.at(-1)!), maxPageSize, where);
      assert.equal(pools.length, 24, where);
    }
  }
});
