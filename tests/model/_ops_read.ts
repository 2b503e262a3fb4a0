/**
 * Reads in every form, each checked against the model: read and readTensor
 * awaited at once, reads batched in one tick, readMany, reads of every live
 * handle, deferred reads awaited later (drain); and flush and sync.
 */

import assert from "node:assert/strict";
import type { ComputeClient } from "../../mod.ts";
import { maybeDrop } from "./_ops_memory.ts";
import type { ModelState, Ref, Snapshot } from "./_state.ts";

/** Reads a handle (sometimes as a tensor) and compares it with the model. */
export async function doRead(st: ModelState): Promise<void> {
  const { chance, pick } = st.rand;
  if (st.refs.length === 0) return;
  const r = pick(st.refs);
  const { c, s } = st.clientFor();
  const asTensor = chance(0.25);
  st.note(`read${asTensor ? "Tensor" : ""} s${s} ${r.name}`);
  const want = st.snapshot(r);
  if (asTensor) {
    const words = r.len % 4 === 0 && chance(0.5);
    const tensor = words
      ? { handle: r.h, shape: [r.len / 4], strides: [1], elemSize: 4 }
      : { handle: r.h, shape: [r.len], strides: [1], elemSize: 1 };
    st.compare(`readTensor s${s} ${r.name}`, await c.readTensor(tensor), want);
  } else st.compare(`read s${s} ${r.name}`, await c.read(r.h, Uint8Array), want);
}

/** Several reads issued in the same tick, on any streams. */
export async function doReadBatch(st: ModelState): Promise<void> {
  const { int, pick } = st.rand;
  if (st.refs.length === 0) return;
  const n = 2 + int(4);
  const reads: { what: string; want: Snapshot; p: Promise<Uint8Array> }[] = [];
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = pick(st.refs);
    const { c, s } = st.clientFor();
    parts.push(`s${s}:${r.name}`);
    reads.push({ what: `read s${s} ${r.name}`, want: st.snapshot(r), p: c.read(r.h, Uint8Array) });
  }
  st.note(`read batch (same tick) ${parts.join(" ")}`);
  const got = await Promise.all(reads.map((x) => x.p));
  got.forEach((g, i) => st.compare(reads[i]!.what, g, reads[i]!.want));
}

/** A client and 0..4 handles (duplicates allowed) for a readMany. */
function readManyArgs(st: ModelState): { c: ComputeClient; s: number; list: Ref[] } {
  const { int, pick } = st.rand;
  const { c, s } = st.clientFor();
  const n = int(5); // 0..4 handles, duplicates allowed
  const list: Ref[] = [];
  for (let i = 0; i < n; i++) list.push(pick(st.refs));
  return { c, s, list };
}

/** A readMany awaited at once. */
export async function doReadMany(st: ModelState): Promise<void> {
  if (st.refs.length === 0) return;
  const { c, s, list } = readManyArgs(st);
  const what = `readMany s${s} [${list.map((r) => r.name).join(", ")}]`;
  st.note(what);
  const want = list.map((r) => st.snapshot(r));
  const got = await c.readMany(list.map((r) => r.h), Uint8Array);
  assert.equal(got.length, list.length, `${what}: result count`);
  got.forEach((g, i) => st.compare(`${what}[${i}]`, g, want[i]!));
}

/** A read or readMany whose promise is awaited later (by drain). */
export function doDeferredRead(st: ModelState): void {
  const { chance, pick } = st.rand;
  if (st.refs.length === 0) return;
  if (chance(0.5)) {
    const r = pick(st.refs);
    const { c, s } = st.clientFor();
    const what = `deferred read s${s} ${r.name}`;
    st.note(what);
    const expect = [st.snapshot(r)];
    const promise = c.read(r.h, Uint8Array).then((b) => [b]);
    promise.catch(() => {});
    st.pending.push({ what, expect, promise });
    maybeDrop(st, [r], 0.15);
  } else {
    const { c, s, list } = readManyArgs(st);
    const what = `deferred readMany s${s} [${list.map((r) => r.name).join(", ")}]`;
    st.note(what);
    const expect = list.map((r) => st.snapshot(r));
    const promise = c.readMany(list.map((r) => r.h), Uint8Array);
    promise.catch(() => {});
    st.pending.push({ what, expect, promise });
  }
}

/** Awaits every pending read and flush, checking each against its snapshot. */
export async function drain(st: ModelState): Promise<void> {
  const reads = st.pending;
  st.pending = [];
  const settled = await Promise.allSettled(reads.map((p) => p.promise));
  settled.forEach((s, i) => {
    const p = reads[i]!;
    if (s.status === "rejected") {
      throw new Error(`${p.what}: the deferred read rejected: ${String(s.reason)}`, { cause: s.reason });
    }
    assert.equal(s.value.length, p.expect.length, `${p.what}: result count`);
    s.value.forEach((got, j) => st.compare(`${p.what}[${j}]`, got, p.expect[j]!));
  });
  const flushes = st.pendingFlushes.splice(0);
  for (const f of flushes) {
    try {
      await f.promise;
    } catch (e) {
      throw new Error(`${f.what}: an unawaited flush rejected: ${String(e)}`, { cause: e });
    }
  }
}

/** Awaits the deferred reads and flushes. */
export async function doDrain(st: ModelState): Promise<void> {
  st.note(`await ${st.pending.length} deferred reads and ${st.pendingFlushes.length} flushes`);
  await drain(st);
}

/** Flushes a stream, awaited or not (an unawaited flush is awaited by drain). */
export async function doFlush(st: ModelState): Promise<void> {
  const { c, s } = st.clientFor();
  if (st.rand.chance(0.4)) {
    st.note(`flush s${s} (not awaited)`);
    const promise = c.flush();
    promise.catch(() => {});
    st.pendingFlushes.push({ what: `flush s${s}`, promise });
    return;
  }
  st.note(`flush s${s}`);
  await c.flush();
}

/** Syncs a stream. */
export async function doSync(st: ModelState): Promise<void> {
  const { c, s } = st.clientFor();
  st.note(`sync s${s}`);
  await c.sync();
}

/** Syncs every stream the server knows. */
export async function syncAll(st: ModelState): Promise<void> {
  for (const id of st.base.server.streamIds()) await st.base.onStream(id).sync();
}

/** Reads every live handle in one readMany and compares all of them. */
export async function doReadAll(st: ModelState): Promise<void> {
  if (st.refs.length === 0) return;
  const { c, s } = st.clientFor();
  const list = [...st.refs];
  st.note(`readMany s${s} of all ${list.length} live handles`);
  const want = list.map((r) => st.snapshot(r));
  const got = await c.readMany(list.map((r) => r.h), Uint8Array);
  got.forEach((g, i) => st.compare(`read all: ${list[i]!.name}`, g, want[i]!));
}
