/**
 * Bursts: several operations in one tick, with no await between them, on one
 * stream or on any, sometimes right after a new kernel's first launch (so the
 * stream holds the work that follows).
 */

import { macrotask } from "../_gpu.ts";
import { doReplay } from "./_ops_graph.ts";
import { indirectNow, launchNow } from "./_ops_launch.ts";
import { cleanupNow, doClone, doCreate, doEmpty, doRelease, doView, doWrite } from "./_ops_memory.ts";
import { releaseStreamNow } from "./_ops_pools.ts";
import { doDeferredRead } from "./_ops_read.ts";
import { STREAMS } from "./_options.ts";
import type { ModelState } from "./_state.ts";

/**
 * Several operations in one tick, with no await between them: reads,
 * writes, launches and releases interleave with batching, held work and
 * deferred submits.
 */
export async function doBurst(st: ModelState): Promise<void> {
  const { int, chance, pick } = st.rand;
  const n = 2 + int(chance(0.2) ? 14 : 7);
  st.burstStream = chance(0.5) ? pick(STREAMS) : null;
  const compile = chance(0.3);
  st.note(
    `burst: ${n} operations in one tick${st.burstStream === null ? "" : ` on stream ${st.burstStream}`}` +
      `${compile ? ", after a new kernel's first launch" : ""}`,
  );
  try {
    // A new kernel's first launch: the stream holds the work that follows until it is validated.
    if (compile && launchNow(st, true) && st.avoid.has("held-write")) return await macrotask();
    for (let i = 0; i < n; i++) {
      // Writes and indirect launches (which write their counts first) are held too while a kernel compiles.
      const k = compile && chance(0.35) ? pick([6, 6, 12]) : int(15);
      if (k < 4) {
        if (launchNow(st) && st.avoid.has("held-write")) return await macrotask();
      } else if (k === 4) doCreate(st);
      else if (k === 5) doEmpty(st);
      else if (k === 6) doWrite(st);
      else if (k === 7) doClone(st);
      else if (k === 8) doView(st);
      else if (k === 9) doRelease(st);
      else if (k === 10 || k === 11) doDeferredRead(st);
      else if (k === 12) {
        if (chance(0.5) || st.avoid.has("held-indirect")) doReplay(st);
        else indirectNow(st);
      } else if (k === 13) cleanupNow(st);
      else if (chance(0.3)) {
        releaseStreamNow(st);
        if (chance(0.5)) cleanupNow(st);
      }
    }
  } finally {
    st.burstStream = null;
  }
}
