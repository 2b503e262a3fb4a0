/**
 * Transfers: a small read round trip and 64 MiB uploads and downloads, each
 * next to the fastest raw WebGPU path measured in `deno-webgpu.md`, in the
 * same group and on the same device.
 *
 * - "small read round trip (1 KiB)": raw = copy into a reused `MAP_READ`
 *   buffer, submit, `mapAsync`, `getMappedRange`, `unmap`; client = `read()`.
 *   Both pay Deno's fixed ~10 ms completion wait, which dominates.
 * - "64 MiB upload": raw = `writeBuffer` in 4 MiB chunks with a submit after
 *   each; client = `write()`. Timed until the last chunk is submitted; the
 *   device is drained outside the timed region.
 * - "64 MiB download": raw = copy into a reused staging buffer, one map,
 *   `getMappedRange().transfer()`; client = `read()`. Includes the map wait.
 * - "64 MiB download, 16 handles of 4 MiB": the shape of a `readMany`; raw =
 *   16 copies into one reused staging buffer, one map, 16 ranges
 *   transferred; client = `readMany()` (one staging buffer, one map).
 *
 * Both sides reuse their staging buffers (raw keeps one of exactly the size
 * read; the client its pool's, of a size class at most 19% larger). Groups
 * run one after the other, so a group inherits the garbage of the one before:
 * `download_breakdown.ts` interleaves the variants rep by rep for a fairer
 * ratio and says where the time goes.
 *
 * Try `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`: page faults of fresh 64 MiB
 * allocations dominate downloads on Deno.
 *
 * Run: `deno bench --allow-env bench/transfer_bench.ts`.
 */

import { createClient } from "../mod.ts";

const client = await createClient();
const device = client.server.device;
const SMALL = 1024;
const BIG = 64 * 1024 * 1024;
const CHUNK = 4 * 1024 * 1024;
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const stagingUsage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;

/** A raw storage buffer of `size` bytes, and a staging buffer of the same size to read it through. */
function rawWithStaging(name: string, size: number): [GPUBuffer, GPUBuffer] {
  return [
    device.createBuffer({ label: `raw ${name}`, size, usage }),
    device.createBuffer({ label: `raw ${name} staging`, size, usage: stagingUsage }),
  ];
}

const small = client.create(new Uint8Array(SMALL).fill(3));
const [rawSmall, rawSmallStaging] = rawWithStaging("small", SMALL);
const big = client.create(new Uint8Array(BIG).fill(7));
const [rawBig, rawBigStaging] = rawWithStaging("big", BIG);
const PARTS = 16;
const quarters = Array.from({ length: PARTS }, (_, i) => client.create(new Uint8Array(BIG / PARTS).fill(i)));
const payload = new Uint8Array(BIG);
for (let i = 0; i < BIG; i += 4096) payload[i] = i & 255;
await client.sync();

async function rawRead(src: GPUBuffer, staging: GPUBuffer, size: number, ranges = 1): Promise<ArrayBuffer[]> {
  const encoder = device.createCommandEncoder();
  const part = size / ranges;
  for (let i = 0; i < ranges; i++) encoder.copyBufferToBuffer(src, i * part, staging, i * part, part);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ, 0, size);
  const out = Array.from({ length: ranges }, (_, i) => staging.getMappedRange(i * part, part).transfer());
  staging.unmap();
  return out;
}

Deno.bench({ group: "small read round trip (1 KiB)", name: "raw copy + mapAsync", baseline: true, n: 30 }, async () => {
  await rawRead(rawSmall, rawSmallStaging, SMALL);
});
Deno.bench({ group: "small read round trip (1 KiB)", name: "client.read", n: 30 }, async () => {
  await client.read(small);
});

Deno.bench({ group: "64 MiB upload", name: "raw writeBuffer, 4 MiB chunks", baseline: true, n: 15 }, async (b) => {
  b.start();
  for (let at = 0; at < BIG; at += CHUNK) {
    device.queue.writeBuffer(rawBig, at, payload, at, CHUNK);
    device.queue.submit([]);
  }
  b.end();
  await device.queue.onSubmittedWorkDone();
});
Deno.bench({ group: "64 MiB upload", name: "client.write", n: 15 }, async (b) => {
  b.start();
  client.write(big, payload);
  b.end();
  await client.sync();
});

Deno.bench({ group: "64 MiB download", name: "raw copy + map + transfer", baseline: true, n: 15 }, async () => {
  await rawRead(rawBig, rawBigStaging, BIG);
});
Deno.bench({ group: "64 MiB download", name: "client.read", n: 15 }, async () => {
  await client.read(big);
});

Deno.bench(
  {
    group: "64 MiB download, 16 handles of 4 MiB",
    name: "raw 16 copies + one map + 16 transfers",
    baseline: true,
    n: 15,
  },
  async () => {
    await rawRead(rawBig, rawBigStaging, BIG, PARTS);
  },
);
Deno.bench({ group: "64 MiB download, 16 handles of 4 MiB", name: "client.readMany", n: 15 }, async () => {
  await client.readMany(quarters);
});

globalThis.addEventListener("unload", () => client.destroy());
