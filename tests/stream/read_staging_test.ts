/**
 * Contract under test (issue 18.4): a batch of reads copies into as few
 * staging buffers as fit and maps each once, the staging buffers are reused
 * (steady-state reads create none), and every byte read is exact whatever
 * the sizes and their packing. The counts are the spec path's (fast reads
 * prime more buffers and map them too: fast_reads_test.ts).
 */

import assert from "node:assert/strict";
import type { ComputeClient } from "../../mod.ts";
import { readbackClass } from "../../src/memory/readback_pool.ts";
import { rng, withClient } from "../_gpu.ts";

/** Bytes `i * 7 + seed` of length `n`. */
function pattern(n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 255);
}

/** Counts `mapAsync` calls for reading on every buffer while `fn` runs. */
async function mapsOf(fn: () => Promise<unknown>): Promise<number> {
  const proto = GPUBuffer.prototype;
  const mapAsync = proto.mapAsync;
  let maps = 0;
  proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
    if (args[0] === GPUMapMode.READ) maps++;
    return mapAsync.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.mapAsync = mapAsync;
  }
  return maps;
}

Deno.test("a readMany of 16 handles of 512 KiB copies into one staging buffer and maps it once", async () => {
  await withClient(async (client) => {
    const hs = Array.from({ length: 16 }, (_, i) => client.create(pattern(512 * 1024, i)));
    await client.sync();
    let got: Uint8Array[] = [];
    const maps = await mapsOf(async () => {
      got = await client.readMany(hs);
    });
    assert.equal(maps, 1);
    got.forEach((b, i) => assert.deepEqual(b, pattern(512 * 1024, i)));
  }, { fastReads: false });
});

Deno.test("separate reads of one tick share staging buffers that grow with the batch: 16 reads of 512 KiB, at most 5 maps", async () => {
  await withClient(async (client) => {
    const hs = Array.from({ length: 16 }, (_, i) => client.create(pattern(512 * 1024, i)));
    await client.sync();
    let got: Uint8Array[] = [];
    const maps = await mapsOf(async () => {
      got = await Promise.all(hs.map((h) => client.read(h)));
    });
    assert.ok(maps >= 1 && maps <= 5, `${maps} maps`);
    got.forEach((b, i) => assert.deepEqual(b, pattern(512 * 1024, i)));
  }, { fastReads: false });
});

Deno.test("reads of the same shapes again create no staging buffer", async () => {
  await withClient(async (client) => {
    const sizes = [4, 1000, 65536, 300_000, 2_000_000];
    const hs = sizes.map((n, i) => client.create(pattern(n, i)));
    const round = async () => {
      const one = await client.read(hs[4]!);
      const many = await client.readMany(hs);
      const each = await Promise.all(hs.map((h) => client.read(h)));
      return [one, ...many, ...each];
    };
    await round();
    const staging = client.server.stream(0).staging;
    const created = staging.created;
    for (let i = 0; i < 3; i++) {
      const got = await round();
      assert.deepEqual(got[0], pattern(sizes[4]!, 4));
      got.slice(1, 6).forEach((b, j) => assert.deepEqual(b, pattern(sizes[j]!, j)));
      got.slice(6).forEach((b, j) => assert.deepEqual(b, pattern(sizes[j]!, j)));
    }
    assert.equal(staging.created, created);
  }, { fastReads: false });
});

Deno.test("reads of random sizes from 1 B to 1 MiB, alone and together, return exactly their bytes", async () => {
  await withClient(async (client: ComputeClient) => {
    const r = rng(18_4);
    for (let round = 0; round < 6; round++) {
      const sizes = Array.from({ length: 1 + Math.floor(r() * 12) }, () => 1 + Math.floor(r() ** 3 * 1024 * 1024));
      const hs = sizes.map((n, i) => client.create(pattern(n, round * 16 + i)));
      const together = r() < 0.5;
      const got = together ? await client.readMany(hs) : await Promise.all(hs.map((h) => client.read(h)));
      got.forEach((b, i) => {
        assert.equal(b.byteLength, sizes[i]);
        assert.equal(b.buffer.byteLength, sizes[i], "the result's buffer holds exactly what was read");
        assert.deepEqual(b, pattern(sizes[i]!, round * 16 + i));
      });
      hs.forEach((h) => h.release());
    }
  });
});

Deno.test("staging size classes are four per doubling from 256 B, at most 19% above the request", () => {
  const max = 256 * 1024 * 1024;
  assert.deepEqual([1, 256, 257, 1024, 1025].map((n) => readbackClass(n, max)), [256, 256, 512, 1024, 1280]);
  for (let n = 300; n < max; n = Math.ceil(n * 1.37)) {
    const c = readbackClass(n, max);
    assert.ok(c >= n && c <= Math.max(n * 1.19 + 256, 512) && c % 256 === 0, `${n} B → ${c} B`);
  }
  const odd = 200 * 1024 * 1024;
  assert.equal(
    readbackClass(190 * 1024 * 1024 + 2, odd),
    190 * 1024 * 1024 + 4,
    "above the last class: the size itself",
  );
});
