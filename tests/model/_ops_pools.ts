/**
 * Operations on the memory manager's pools and layouts: persistent allocation
 * windows, tensor groups, installMemoryPools, releasing every allocation of a
 * stream, an allocation above the upload chunk threshold, and memoryUsage
 * checks against the model.
 */

import assert from "node:assert/strict";
import { type Handle, InstallMemoryPoolsError, IoError } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";
import { launchOn } from "./_launches.ts";
import { doCleanup } from "./_ops_memory.ts";
import { drain, syncAll } from "./_ops_read.ts";
import { chooseConfig, EXTRA_STREAMS, STREAMS } from "./_options.ts";
import { type LaunchSpec, type ModelState, u32s } from "./_state.ts";

/** Opens or closes a persistent allocation window on a stream. */
export function doPersistent(st: ModelState): void {
  const { chance, pick } = st.rand;
  const s = pick(STREAMS);
  const close = st.persistentDepth[s]! > 0 && (st.persistentDepth[s]! >= 3 || chance(0.5));
  st.note(`allocationMode(${close ? "auto" : "persistent"}) on s${s}`);
  st.clients[s]!.allocationMode(close ? "auto" : "persistent");
  st.persistentDepth[s]! += close ? -1 : 1;
}

/** Tensor groups: one reservation, several aligned views. */
export function doTensors(st: ModelState): void {
  const { int, chance, pick, randomBytes } = st.rand;
  const align = st.align;
  const { c, s } = st.clientFor();
  const k = 1 + int(4);
  const descriptors = Array.from({ length: k }, () => {
    const elemSize = pick([4, 4, 2, 1]);
    const shape = chance(0.5) ? [int(33)] : [1 + int(6), int(9)];
    return { shape, elemSize };
  });
  const bytesOf = (d: { shape: number[]; elemSize: number }) => d.shape.reduce((a, b) => a * b, 1) * d.elemSize;
  const withData = chance(0.6);
  const data = descriptors.map((d) => randomBytes(bytesOf(d)));
  st.note(
    `${withData ? "createTensors" : "emptyTensors"} s${s} ${
      descriptors.map((d) => `[${d.shape}]x${d.elemSize}`).join(" ")
    } -> h${st.nextRef}..`,
  );
  const tensors = withData
    ? c.createTensors(descriptors.map((descriptor, i) => ({ descriptor, data: data[i]!.slice() })))
    : c.emptyTensors(descriptors);
  assert.equal(tensors.length, k);
  const first = tensors[0]!.handle;
  const m = st.newMem(s, first.size);
  tensors.forEach((t, i) => {
    const h = t.handle;
    assert.equal(h.memory, first.memory, "the tensors of a group share one reservation");
    assert.equal(h.sizeInUse, bytesOf(descriptors[i]!), `tensor ${i} size`);
    assert.equal(h.offsetStart % align, 0, `tensor ${i} offset ${h.offsetStart} is aligned`);
    let stride = 1;
    for (let d = t.shape.length - 1; d >= 0; d--) {
      assert.equal(t.strides[d], stride, `tensor ${i} strides [${t.strides}] are contiguous`);
      stride *= t.shape[d]!;
    }
    const r = st.addRef(h, m, h.offsetStart, h.sizeInUse);
    for (const o of tensors.slice(0, i)) {
      const a = o.handle;
      assert.ok(
        h.sizeInUse === 0 || a.sizeInUse === 0 || a.offsetStart + a.sizeInUse <= h.offsetStart ||
          h.offsetStart + h.sizeInUse <= a.offsetStart,
        "tensors of a group do not overlap",
      );
    }
    if (withData) {
      m.bytes.set(data[i]!, r.off);
      m.def.fill(1, r.off, r.off + r.len);
    }
  });
}

/** Memory layouts installed at run time: refused while memory is live in the stream's pools. */
export function doInstallPools(st: ModelState): void {
  installPoolsOn(st, st.rand.pick([...STREAMS, ...EXTRA_STREAMS]));
}

/** Installs a random memory layout on stream `s` (refused while its pools hold live memory). */
export function installPoolsOn(st: ModelState, s: number): void {
  const layout = chooseConfig(st.rand.pick).memory!;
  if (st.avoid.has("install-zero") && st.refs.some((r) => r.mem.bytes.byteLength === 0)) return;
  st.note(`installMemoryPools s${s} ${JSON.stringify(layout)}`);
  try {
    st.base.onStream(s).installMemoryPools(layout);
  } catch (e) {
    assert.ok(e instanceof InstallMemoryPoolsError, `installMemoryPools: ${String(e)}`);
    assert.equal(e.kind, "pools-in-use");
  }
}

/**
 * Destroys every graph that binds memory of one stream, then releases every
 * handle of that stream's allocations, so that its pages become free.
 */
export function releaseStreamNow(st: ModelState): number {
  const { chance, pick } = st.rand;
  const s = pick(STREAMS);
  // Zero-byte allocations are easy to forget: sometimes they stay.
  const keepEmpty = chance(0.5);
  st.note(
    `release every handle of stream ${s}'s allocations${keepEmpty ? " but the empty ones" : ""}` +
      " (and destroy the graphs that bind them)",
  );
  for (const g of [...st.graphs]) if (g.mems.some((m) => m.stream === s)) st.destroyGraph(g);
  for (const r of [...st.refs]) {
    if (r.mem.stream === s && !(keepEmpty && r.mem.bytes.byteLength === 0)) st.releaseRef(r);
  }
  return s;
}

/** Releases a stream's allocations, then maybe installs a new layout on it and cleans up. */
export async function doReleaseStream(st: ModelState): Promise<void> {
  const { chance } = st.rand;
  const s = releaseStreamNow(st);
  if (chance(0.3)) installPoolsOn(st, s); // nothing live on it now (empty allocations aside): a new layout
  if (chance(0.7)) await doCleanup(st);
}

/** A large allocation: uploads above the chunk threshold are split into several submits. */
export async function doBig(st: ModelState): Promise<void> {
  const { int, u32 } = st.rand;
  const { c, s } = st.clientFor();
  const threshold = st.base.server.settings.uploadChunkThreshold;
  const size = threshold + 4 * (1 + int(4096));
  const data = new Uint8Array(size);
  const seedWord = u32();
  const w = new Uint32Array(data.buffer);
  for (let i = 0; i < w.length; i++) w[i] = (Math.imul(i, 2654435761) ^ seedWord) >>> 0;
  st.note(`big: create s${s} h${st.nextRef} (${size} B), inc, read, release`);
  let h: Handle;
  try {
    h = c.create(data);
  } catch (e) {
    // A layout whose largest pool is smaller refuses it at once (and that is all).
    if (e instanceof IoError && e.kind === "buffer-too-big") return;
    throw e;
  }
  const r = st.addRef(h, st.newMem(s, size), 0, size);
  r.mem.bytes.set(data);
  r.mem.def.fill(1);
  const spec: LaunchSpec = {
    kernel: incKernel,
    count: [Math.ceil(size / 4 / 64)],
    refs: [r],
    info: undefined,
    text: "inc",
    apply: () => {
      const w = u32s(r.mem.bytes); // every byte is defined and stays so
      for (let i = 0; i < w.length; i++) w[i] = (w[i]! + 1) >>> 0;
    },
  };
  if (launchOn(st, c, spec) !== null) spec.apply();
  st.compare(`big read ${r.name}`, await c.read(h), st.snapshot(r));
  st.releaseRef(r);
}

/** Once every read is drained and every stream synced, memoryUsage matches the model's live memory. */
export async function doUsage(st: ModelState): Promise<void> {
  st.note(`usage check (drain, sync all, memoryUsage)`);
  await drain(st);
  await syncAll(st);
  const want = st.liveMemBytes();
  const u = st.base.memoryUsage();
  assert.equal(u.bytesInUse, want.bytes, `memoryUsage().bytesInUse with ${want.allocs} live allocations`);
  assert.equal(u.numberAllocs, want.allocs, `memoryUsage().numberAllocs`);
}
