/**
 * Launch operations: launches of the modelled kernels (on handles of any
 * stream, kernels compiled on first launch), indirect launches whose counts
 * are written just before, and launches inside profiles and dry runs.
 */

import assert from "node:assert/strict";
import { macrotask } from "../_gpu.ts";
import { launchOn, makeIndirect, makeLaunch } from "./_launches.ts";
import { doCreate, maybeDrop } from "./_ops_memory.ts";
import type { LaunchSpec, ModelState } from "./_state.ts";

/** A random launch; true when it was a kernel's first launch (the stream may now hold work behind it). */
export function launchNow(st: ModelState, newKernel = false): boolean {
  const spec = makeLaunch(st, true, true, newKernel);
  if (spec === null) {
    doCreate(st);
    return false;
  }
  const { c, s } = st.clientFor();
  st.note(`launch s${s} ${spec.text}`);
  const first = launchOn(st, c, spec);
  if (first === null) return false; // refused at once: no effect
  spec.apply();
  maybeDrop(st, spec.refs, 0.05);
  return first;
}

/** A random launch (with held-write avoided, held work goes before anything else). */
export async function doLaunch(st: ModelState): Promise<void> {
  // With held-write avoided, let held work go before anything else.
  if (launchNow(st) && st.avoid.has("held-write")) await macrotask();
}

/** An indirect launch (after a macrotask when held-indirect is avoided). */
export async function doIndirect(st: ModelState): Promise<void> {
  if (st.avoid.has("held-indirect")) await macrotask(); // no stream holds work past a macrotask
  indirectNow(st);
}

/** Writes small counts into a count handle (creating one now and then) and launches counted by it. */
export function indirectNow(st: ModelState): void {
  const { int, chance, pick } = st.rand;
  const { c, s } = st.clientFor();
  let cnts = st.countRefs();
  if (cnts.length === 0 || chance(0.15)) {
    const wordsN = 3 + int(4);
    st.note(`create s${s} h${st.nextRef}: a count handle (${wordsN} words)`);
    const m = st.newMem(s, wordsN * 4);
    m.reserved = true;
    st.addRef(c.create(new Uint32Array(wordsN)), m, 0, wordsN * 4).mem.def.fill(1);
    cnts = st.countRefs();
  }
  const cnt = pick(cnts);
  // Small counts (inc binds x[g.x] only, so y and z stay 0 or 1: no two invocations share an element).
  const counts = [int(4), pick([0, 1, 1, 1]), pick([0, 1, 1])];
  const w = st.clientFor();
  st.note(`write s${w.s} ${cnt.name} counts [${counts}]`);
  const bytes = new Uint8Array(cnt.len);
  new Uint32Array(bytes.buffer).set(counts);
  w.c.write(cnt.h, bytes);
  cnt.mem.bytes.set(bytes, cnt.off);
  cnt.mem.def.fill(1, cnt.off, cnt.off + cnt.len);
  // Binding the count memory itself changes the counts: only while no graph reads them at replay.
  const spec = makeIndirect(st, cnt, cnt.mem.graphRefs === 0 && chance(0.15));
  if (spec === null) return;
  st.note(`launch s${s} ${spec.text}`);
  if (launchOn(st, c, spec) === null) return; // a count view at an unaligned offset, bound too: refused at once
  spec.apply();
  maybeDrop(st, [cnt], 0.2);
}

/** Launches (and sometimes a graph replay) inside a profile. */
export async function doProfile(st: ModelState): Promise<void> {
  const { int, chance, pick } = st.rand;
  const { c, s } = st.clientFor();
  const specs: LaunchSpec[] = [];
  for (let i = 1 + int(4); i > 0; i--) {
    const spec = makeLaunch(st, true);
    if (spec !== null) specs.push(spec);
  }
  const g = st.graphs.length > 0 && chance(0.4) ? pick(st.graphs) : null;
  st.note(`profile s${s}: ${specs.map((x) => x.text).join("; ")}${g ? `; replay ${g.name}` : ""}`);
  const p = await c.profile(() => {
    for (const spec of specs) launchOn(st, c, spec);
    g?.graph.replay();
    return specs.length;
  });
  assert.equal(p.result, specs.length);
  assert.ok(p.nanos >= 0, `profile duration ${p.nanos}`);
  for (const spec of specs) spec.apply();
  if (g) { for (const spec of g.specs) spec.apply(); }
}

/** Launches and empties inside a dry run: kernels are compiled, not dispatched. */
export async function doDryRun(st: ModelState): Promise<void> {
  const { int, randomSize } = st.rand;
  const { c, s } = st.clientFor();
  const specs: LaunchSpec[] = [];
  for (let i = 1 + int(3); i > 0; i--) {
    const spec = makeLaunch(st, true);
    if (spec !== null) specs.push(spec);
  }
  const sizes = Array.from({ length: int(3) }, randomSize);
  st.note(
    `dryRun s${s}: ${specs.map((x) => x.text).join("; ")}; empty ${sizes.join(", ")} B (no effect but the empties)`,
  );
  await c.dryRun(() => {
    for (const spec of specs) launchOn(st, c, spec); // compiled, not dispatched
    for (const size of sizes) st.addRef(c.empty(size), st.newMem(s, size), 0, size);
  });
}
