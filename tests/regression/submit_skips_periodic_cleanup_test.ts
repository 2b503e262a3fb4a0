/**
 * Regression: on wgpu the main memory manager runs a periodic (non-explicit)
 * cleanup after every submit of its stream, besides the one at the start of
 * each reservation (contract 3.5). The port ran it only on reservations, so
 * an exclusive pool's idle pages aged only while new memory was reserved: a
 * workload that keeps launching and reading without reserving kept every idle
 * page however many submits went by.
 *
 * With `deallocPeriod: 5` the idle check runs on every cleanup (every 5/5
 * reservations); a fresh page has free_count 4 and is freed at the first check
 * that finds it idle.
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

Deno.test("a submit runs the periodic cleanup: an idle exclusive page is freed without a new reservation", async () => {
  await withClient(async (client) => {
    const pages = () => client.memoryReport().dynamic[0]!.pages;
    const kept = client.create(new Uint8Array(1024).fill(7)); // reservation 1
    const idle = client.empty(1024); // reservation 2: its own page
    assert.equal(pages(), 2);
    idle.release();
    assert.equal(pages(), 2, "nothing submitted yet, nothing swept");
    const back = await client.read(kept); // a copy into staging: a real submit
    assert.equal(back[0], 7);
    assert.equal(pages(), 1, "the submit's periodic cleanup freed the idle page");
    kept.release();
  }, { memory: { pools: [{ kind: "exclusive", maxAllocSize: 4096, deallocPeriod: 5 }] } });
});
