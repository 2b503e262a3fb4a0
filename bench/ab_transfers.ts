/**
 * Uploads and downloads, this tree against another, interleaved in one
 * process, next to the raw WebGPU paths: issue 33's "no regression of upload
 * or download" as one device call. Cases, each at `SIZES` bytes (default
 * 4 KiB, 1 MiB and 64 MiB):
 * - `write`: `client.write(handle, bytes)` then `client.sync()`; raw:
 *   `queue.writeBuffer` in 4 MiB chunks with a submit after each, then
 *   `onSubmittedWorkDone()`;
 * - `read`: `client.read(handle)`; raw: a copy into a reused `MAP_READ`
 *   buffer of the same size, one submit, `mapAsync`, the mapped range taken
 *   with `transfer()` (the one copy Deno makes, as the runtime does),
 *   `unmap` (`rawTransfer` in `_raw.ts`).
 *
 * Both trees' clients run with their defaults: reads take the spec path
 * (fast reads are opt-in), so each small read waits out Deno's ~10 ms map
 * poll, as the raw read does. With `FAST=1` both clients are created with
 * `fastReads: true` (the raw read stays on the spec path). Every case runs `WARMUP` untimed
 * times, then `ROUNDS` rounds of `BLOCK` runs, the cases in a fresh shuffled
 * order each round; the summary is each case's median (ms), and this tree ÷
 * the other per round (the median of per-round ratios, quartiles).
 *
 * ```
 * mkdir -p /tmp/old && git archive <rev> mod.ts src | tar -x -C /tmp/old
 * OLD=/tmp/old deno run -A bench/ab_transfers.ts
 * ```
 * (env `OLD`, required; `SIZES`, comma-separated bytes; `ROUNDS`, default
 * 10; `BLOCK`, default 5; `WARMUP`, default 3; `FAST`, `1` for fast reads).
 */

import * as NEW from "../mod.ts";
import { importTree, median, pairedRatio, rawTransfer } from "./_raw.ts";

type Runtime = typeof NEW;
const oldPath = Deno.env.get("OLD");
if (!oldPath) {
  console.error("ab_transfers: set OLD to the other tree's root (a folder holding its mod.ts)");
  Deno.exit(2);
}
const SIZES = (Deno.env.get("SIZES") ?? `${4 << 10},${1 << 20},${64 << 20}`).split(",").map(Number);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 10);
const BLOCK = Number(Deno.env.get("BLOCK") ?? 5);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 3);
const FAST = Deno.env.get("FAST") === "1";

/** Human-readable size. */
const sizeName = (n: number) => n >= 1 << 20 ? `${n >> 20} MiB` : `${n >> 10} KiB`;

/** One tree's cases (ms per run), on its own client. */
async function cases(runtime: Runtime, tree: string, device?: GPUDevice) {
  const client = await runtime.createClient({ ...(device ? { device } : {}), ...(FAST ? { fastReads: true } : {}) });
  const out: Record<string, () => Promise<number>> = {};
  for (const size of SIZES) {
    const bytes = new Uint8Array(size).fill(5);
    const handle = client.create(bytes);
    await client.sync();
    out[`write ${sizeName(size)}, ${tree}`] = async () => {
      const t0 = performance.now();
      client.write(handle, bytes);
      await client.sync();
      return performance.now() - t0;
    };
    out[`read ${sizeName(size)}, ${tree}`] = async () => {
      const t0 = performance.now();
      const got = await client.read(handle, Uint8Array);
      const ms = performance.now() - t0;
      if (got[size - 1] !== 5) throw new Error(`${tree}: read ${size} B gave wrong bytes`);
      return ms;
    };
  }
  return { device: client.server.device, cases: out };
}

const fresh = await cases(NEW, "this tree");
const device = fresh.device;
const other = await cases(await importTree(oldPath), "other tree", device);

// The raw paths, on the same device.
const raw: Record<string, () => Promise<number>> = {};
for (const size of SIZES) {
  const bytes = new Uint8Array(size).fill(5);
  const path = rawTransfer(device, size, "ab_transfers raw");
  raw[`write ${sizeName(size)}, raw`] = () => path.write(bytes);
  raw[`read ${sizeName(size)}, raw`] = async () => {
    const { ms, bytes: got } = await path.read();
    if (got[size - 1] !== 5) throw new Error(`raw: read ${size} B gave wrong bytes`);
    return ms;
  };
}

const all = { ...raw, ...fresh.cases, ...other.cases };
const names = Object.keys(all);
const blocks: Record<string, number[][]> = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) for (let i = 0; i < WARMUP; i++) await all[name]!();
let seed = 0x2545f491;
const order = [...names];
for (let round = 0; round < ROUNDS; round++) {
  for (let i = order.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = Math.floor(seed / 2 ** 32 * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const name of order) {
    const block: number[] = [];
    for (let i = 0; i < BLOCK; i++) block.push(await all[name]!());
    blocks[name]!.push(block);
  }
}
console.log(
  `${ROUNDS} rounds of ${BLOCK}; ${
    FAST ? "fast reads" : "spec reads"
  }; ms per run (median); this tree ÷ other tree per round (quartiles)`,
);
for (const size of SIZES) {
  for (const op of ["write", "read"]) {
    const key = (tree: string) => `${op} ${sizeName(size)}, ${tree}`;
    const m = (tree: string) => median(blocks[key(tree)]!.flat()).toFixed(3);
    const p = pairedRatio(blocks[key("this tree")]!, blocks[key("other tree")]!);
    console.log(
      `${op.padEnd(5)} ${sizeName(size).padStart(7)}: raw ${m("raw")}, this ${m("this tree")}, other ${
        m("other tree")
      }; ` +
        `this ÷ other ${p.median.toFixed(3)} (${p.q1.toFixed(3)}–${p.q3.toFixed(3)})`,
    );
  }
}
Deno.exit(0);
