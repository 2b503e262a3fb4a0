/**
 * The end of a run: the teardown (everything released, cleaned up and synced
 * leaves no memory, page or device buffer behind), then `destroy()` with work
 * in flight on every stream.
 */

import assert from "node:assert/strict";
import { DeviceLostError } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";
import { expectReject, expectThrow } from "./_expect.ts";
import { launchOn, makeLaunch } from "./_launches.ts";
import { drain, syncAll } from "./_ops_read.ts";
import { STREAMS, WORD_COUNTS } from "./_options.ts";
import type { ModelState, Ref, Snapshot } from "./_state.ts";

/** Teardown: everything released, cleaned up and synced leaves no memory in use. */
export async function teardown(st: ModelState): Promise<void> {
  const base = st.base;
  st.note(`teardown: drain, destroy ${st.graphs.length} graphs, read and release ${st.refs.length} handles`);
  await drain(st);
  for (const g of st.graphs) g.graph.destroy();
  STREAMS.forEach((s, i) => {
    for (; st.persistentDepth[i]! > 0; st.persistentDepth[i]!--) st.clients[s]!.allocationMode("auto");
  });
  // Slices moved by pools that compact, on every stream (before the teardown's releases and cleanups).
  st.stats.moves = 0;
  for (const id of base.server.streamIds()) {
    for (const p of base.server.stream(id).memory.report().dynamic) st.stats.moves += p.compaction?.moves ?? 0;
  }
  const live = [...st.refs];
  if (live.length > 0) {
    const want = live.map((r) => st.snapshot(r));
    const got = await base.readMany(live.map((r) => r.h), Uint8Array);
    got.forEach((g, i) => st.compare(`final read ${live[i]!.name}`, g, want[i]!));
  }
  for (const r of live) st.releaseRef(r);
  base.memoryCleanup();
  await syncAll(st);
  const u = base.memoryUsage();
  assert.equal(u.bytesInUse, 0, `bytesInUse after releasing everything: ${JSON.stringify(u)}`);
  assert.equal(u.numberAllocs, 0, `numberAllocs after releasing everything: ${JSON.stringify(u)}`);
  // Everything completed: a second cleanup frees every page, and no device buffer is left.
  base.memoryCleanup();
  const after = base.memoryUsage();
  assert.equal(after.bytesReserved, 0, `bytesReserved after a cleanup with nothing live: ${JSON.stringify(after)}`);
  for (const id of base.server.streamIds()) {
    const live = base.server.stream(id).storage.liveBuffers;
    assert.equal(live, 0, `stream ${id} still has ${live} GPUBuffers with nothing live`);
  }
}

/**
 * The finale: new work in flight on every stream (launches, a graph replay,
 * deferred reads, an unawaited flush), then `destroy()`. Every pending
 * promise must settle (with the modelled bytes, or a DeviceLostError), and
 * every later call must fail with a DeviceLostError.
 */
export async function destroyWithWorkInFlight(st: ModelState): Promise<void> {
  const { chance, pick, randomBytes } = st.rand;
  const { clients, stats } = st;
  st.note("finale: work in flight on every stream, then destroy()");
  const made: Ref[] = [];
  for (const s of STREAMS) {
    const data = randomBytes(4 * pick(WORD_COUNTS));
    const m = st.newMem(s, data.byteLength);
    m.bytes.set(data);
    m.def.fill(1);
    made.push(st.addRef(clients[s]!.create(data), m, 0, data.byteLength));
  }
  const spec = makeLaunch(st, false);
  const graph = spec === null ? null : await clients[0]!.capture(() => launchOn(st, clients[0]!, spec));
  spec?.apply();
  const settled: { what: string; want: Snapshot | null; p: Promise<unknown> }[] = [];
  for (let i = 0; i < 6; i++) {
    const { c, s } = st.clientFor();
    const launch = makeLaunch(st, false);
    if (launch !== null && launchOn(st, c, launch) !== null) launch.apply();
    if (graph !== null && chance(0.3)) {
      graph.replay();
      spec!.apply();
    }
    const r = pick(st.refs);
    settled.push({ what: `read s${s} ${r.name}`, want: st.snapshot(r), p: c.read(r.h, Uint8Array) });
    if (chance(0.3)) settled.push({ what: `flush s${s}`, want: null, p: c.flush() });
  }
  st.base.destroy();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), 10_000));
  const outcome = await Promise.race([Promise.allSettled(settled.map((x) => x.p)), timeout]);
  clearTimeout(timer);
  assert.notEqual(outcome, "timeout", "promises pending at destroy() settle");
  (outcome as PromiseSettledResult<unknown>[]).forEach((o, i) => {
    const { what, want } = settled[i]!;
    stats.ops[`finale: ${o.status}`] = (stats.ops[`finale: ${o.status}`] ?? 0) + 1;
    if (o.status === "rejected") {
      assert.ok(o.reason instanceof DeviceLostError, `${what} after destroy(): ${String(o.reason)}`);
    } else if (want !== null) st.compare(`${what} (settled at destroy())`, o.value as Uint8Array, want);
  });
  const c = pick(clients);
  const r = pick(made);
  expectThrow("create after destroy()", DeviceLostError, () => c.create(new Uint32Array(4)));
  expectThrow("launch after destroy()", DeviceLostError, () => c.launch(incKernel, [1], [r.h]));
  expectThrow("memoryUsage after destroy()", DeviceLostError, () => c.memoryUsage());
  await expectReject("read after destroy()", DeviceLostError, c.read(r.h, Uint8Array));
  await expectReject("flush after destroy()", DeviceLostError, c.flush());
  await expectReject("sync after destroy()", DeviceLostError, c.sync());
  if (graph !== null) {
    expectThrow("replay after destroy()", DeviceLostError, () => graph.replay());
    graph.destroy(); // a no-op
  }
  for (const x of [...st.refs]) st.releaseRef(x); // releasing stays harmless
}
