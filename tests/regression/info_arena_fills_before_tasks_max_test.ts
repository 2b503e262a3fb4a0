/**
 * Regression (found by `bench/scaling.ts`, issue 33.4): launches with large
 * info words filled the stream's info arena (64–128 KiB) long before
 * `tasksMax` launches, and every fill forced a submit: with 64 words a launch
 * cost 4–7× the raw floor on the software adapter, and more words meant more
 * submits per launch. The arena now grows after a fill that came before
 * `tasksMax`, so later batches of such launches submit once per `tasksMax`.
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { withClient } from "../_gpu.ts";

const WORDS = 512; // 2 KiB of info words per launch
/** out[k] += info[k % WORDS] for the 8 words of one invocation's slot. */
const addInfo = defineKernel({
  name: "add-info",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> info: array<u32, ${WORDS}>;
@compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) { out[i] += info[i * 64u]; }`,
});

Deno.test("a stream whose info arena fills before tasksMax grows it and then submits once per tasksMax", async () => {
  await withClient(async (client) => {
    const out = client.create(new Uint32Array(8));
    const info = new Uint32Array(WORDS);
    client.launch(addInfo, [1], [out], info); // compiled: later launches are not held
    await client.sync();
    const stream = client.server.stream(0);
    const launches = 1024; // 2 MiB of info words: the first arena holds a fraction of tasksMax launches
    const want = new Uint32Array(8);
    const run = () => {
      const before = stream.epoch;
      for (let n = 0; n < launches; n++) {
        for (let i = 0; i < 8; i++) info[i * 64] = (n * 7 + i) & 0xff;
        for (let i = 0; i < 8; i++) want[i] = (want[i]! + info[i * 64]!) >>> 0;
        client.launch(addInfo, [1], [out], info);
      }
      return stream.epoch - before;
    };
    run(); // the arena grows here, as often as it fills early
    const submits = run();
    // tasksMax is 512: two batches, and a third for a launch that ends one exactly at the arena's end.
    assert.ok(submits <= 3, `${submits} submits for ${launches} launches`);
    assert.deepEqual([...await client.read(out, Uint32Array)], [...want]);
  }, { tasksMax: 512 });
});
