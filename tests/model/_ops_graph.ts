/**
 * Graph operations: capture (with temporaries allocated inside the window and
 * indirect counts read at replay), replay, and destroy.
 */

import assert from "node:assert/strict";
import type { Handle } from "../../mod.ts";
import { launchOn, makeAffine, makeIndirect, makeLaunch } from "./_launches.ts";
import { STREAMS } from "./_options.ts";
import { type LaunchSpec, type Mem, type ModelState, words } from "./_state.ts";

/** Captures a few launches (sometimes with a temporary allocated in the window) into a graph. */
export async function doCapture(st: ModelState): Promise<void> {
  const { int, chance, pick, u32 } = st.rand;
  const n = 1 + int(3);
  const specs: LaunchSpec[] = [];
  for (let i = 0; i < n; i++) {
    // An indirect launch reads its counts at replay time (counts written later change the replays).
    // Only small counts with y, z <= 1 (a count bound by its own kernel may have grown since it was written).
    const cnts = st.countRefs().filter((r) => {
      const w = st.countsOf(r);
      return w !== null && w[0] <= 3 && w[1] <= 1 && w[2] <= 1;
    });
    const spec = cnts.length > 0 && chance(0.2) ? makeIndirect(st, pick(cnts), false) : makeLaunch(st, chance(0.3));
    if (spec !== null) specs.push(spec);
  }
  if (specs.length === 0) return;
  const s = chance(0.7) ? st.current : pick(STREAMS);
  const c = st.clients[s]!;
  const name = `g${st.nextGraph++}`;
  // A temporary allocated inside the window (each call of the function allocates it again; the
  // recorded one is the graph's): tmp = src * k + c, then out = tmp * k2 + c2.
  const srcs = st.launchableRefs(1);
  let temp: { ref: { name: string; h: Handle; mem: Mem; off: number; len: number }; specs: LaunchSpec[] } | null = null;
  if (srcs.length > 0 && chance(0.3)) {
    const src = pick(srcs);
    const tw = 1 + int(words(src));
    const tmp = { name: `${name}.tmp`, h: null as unknown as Handle, mem: st.newMem(s, tw * 4), off: 0, len: tw * 4 };
    const outs = st.launchableRefs(1);
    const out = pick(outs);
    const n2 = Math.min(tw, words(out));
    const [k1, c1, k2, c2] = [u32(), u32(), int(7), u32()];
    temp = {
      ref: tmp,
      specs: [
        makeAffine(st, src, tmp, tw, k1, c1, `affine (${src.name} -> ${tmp.name}) n=${tw}`),
        makeAffine(st, tmp, out, n2, k2, c2, `affine (${tmp.name} -> ${out.name}) n=${n2}`),
      ],
    };
  }
  const all = [...specs, ...(temp?.specs ?? [])];
  st.note(`capture s${s} ${name}: ${all.map((x) => x.text).join("; ")}`);
  let calls = 0;
  const graph = await c.capture(() => {
    calls++;
    if (temp !== null) {
      temp.ref.h?.release();
      temp.ref.h = c.empty(temp.ref.len);
    }
    for (const spec of all) launchOn(st, c, spec);
  });
  assert.equal(calls, 2, "capture runs the function twice");
  for (const spec of all) spec.apply(); // the warm-up executed, the recording did not
  const mems = [...new Set(all.flatMap((x) => [...x.refs, ...(x.countRef ? [x.countRef] : [])].map((r) => r.mem)))];
  for (const m of mems) m.graphRefs++;
  const temps: Mem[] = [];
  if (temp !== null) {
    temps.push(temp.ref.mem);
    if (chance(0.7)) {
      st.note(`release ${temp.ref.name} (the graph keeps it)`);
      temp.ref.h.release();
    } else st.addRef(temp.ref.h, temp.ref.mem, 0, temp.ref.len);
  }
  st.graphs.push({ name, graph, stream: s, specs: all, mems, temps });
}

/** Replays a graph one to three times. */
export function doReplay(st: ModelState): void {
  const { int, pick } = st.rand;
  if (st.graphs.length === 0) return;
  const g = pick(st.graphs);
  const times = 1 + int(3);
  st.note(`replay ${g.name} x${times} (captured on s${g.stream})`);
  for (let i = 0; i < times; i++) {
    g.graph.replay();
    for (const spec of g.specs) spec.apply();
  }
}

/** Destroys a graph (sometimes right after a replay). */
export function doDestroyGraph(st: ModelState): void {
  const { chance, pick } = st.rand;
  if (st.graphs.length === 0) return;
  const g = pick(st.graphs);
  const replayFirst = chance(0.3);
  st.note(`destroy ${g.name}${replayFirst ? " right after a replay" : ""}`);
  if (replayFirst) {
    g.graph.replay();
    for (const spec of g.specs) spec.apply();
  }
  st.destroyGraph(g);
}
