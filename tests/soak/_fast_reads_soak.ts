/**
 * The fast-reads soak (issue 19): many reads of random sizes after writes and
 * launches on three streams, each checked byte for byte against a CPU model,
 * with the staging pools and the JS heap sampled along the way. Run by
 * `fast_reads_soak_test.ts` (a size that suits CI) and by
 * `bench/fast_reads_soak.ts` (100,000 reads).
 */

import type { ComputeClient, Handle } from "../../mod.ts";
import { incKernel, rng } from "../_gpu.ts";

/** What a soak saw. */
export interface FastReadSoak {
  /** Reads made (each of one handle, or a `readMany` of two). */
  reads: number;
  /** Reads whose bytes differed from the model (must be 0). */
  wrong: number;
  /** Staging buffers created on every stream, after warm-up and at the end. */
  stagingCreated: { warm: number; end: number };
  /** Bytes of idle staging buffers on every stream, highest after warm-up. */
  stagingHeldMax: number;
  /** JS heap used after a collection (when `gc()` is exposed; else as sampled), after warm-up and at the end. */
  heap: { warm: number; end: number };
  /** Milliseconds, whole soak. */
  ms: number;
}

/**
 * Runs the soak on `root` and two more streams of its device.
 *
 * @param root A client (with `fastReads: true` for the point of it).
 * @param reads Reads to make.
 * @param warmup Reads before the "warm" samples. @default a tenth
 * @returns What it saw.
 */
export async function runFastReadSoak(root: ComputeClient, reads: number, warmup = reads / 10): Promise<FastReadSoak> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const heap = () => {
    gc?.();
    return Deno.memoryUsage().heapUsed;
  };
  const streams = [root, root.onStream(1), root.onStream(2)];
  const pools = () => streams.map((s) => s.server.stream(s.stream).staging);
  const r = rng(0x19);
  const t0 = performance.now();
  // Per stream: a handle and its model (u32 words).
  const state = streams.map((s, i) => {
    const words = 16 + i * 5;
    const model = Uint32Array.from({ length: words }, (_, j) => j * 3 + i);
    return { h: s.create(model) as Handle, model };
  });
  let wrong = 0;
  let warm = { created: 0, heap: 0 };
  let heldMax = 0;
  for (let n = 0; n < reads; n++) {
    const i = n % streams.length;
    const s = streams[i]!;
    const st = state[i]!;
    const op = r();
    if (op < 0.2) {
      // A new size: 4 B to 64 KiB, mostly small.
      const words = 1 + Math.floor(r() ** 3 * 16384);
      st.h.release();
      st.model = Uint32Array.from({ length: words }, () => (r() * 2 ** 32) >>> 0);
      st.h = s.create(st.model);
    } else if (op < 0.6) {
      s.launch(incKernel, [Math.ceil(st.model.length / 64)], [st.h]);
      for (let j = 0; j < st.model.length; j++) st.model[j] = (st.model[j]! + 1) >>> 0;
    }
    const got = r() < 0.25 ? await s.readMany([st.h, st.h], Uint32Array) : [await s.read(st.h, Uint32Array)];
    for (const g of got) {
      if (g.length !== st.model.length || g.some((v, j) => v !== st.model[j])) wrong++;
    }
    if (n % 997 === 0 && n > 0) await s.sync();
    if (n + 1 === Math.floor(warmup)) {
      warm = { created: pools().reduce((a, p) => a + p.created, 0), heap: heap() };
    }
    if (n >= warmup && n % 251 === 0) heldMax = Math.max(heldMax, pools().reduce((a, p) => a + p.heldBytes, 0));
  }
  for (const st of state) st.h.release();
  return {
    reads,
    wrong,
    stagingCreated: { warm: warm.created, end: pools().reduce((a, p) => a + p.created, 0) },
    stagingHeldMax: heldMax,
    heap: { warm: warm.heap, end: heap() },
    ms: performance.now() - t0,
  };
}
