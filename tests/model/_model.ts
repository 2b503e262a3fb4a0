/**
 * A randomized model-based tester for the client API: it runs a random
 * sequence of operations against a real client and, step by step, against a
 * pure-TypeScript model of the bytes of every live handle, and fails with the
 * seed, the client options and the last operations so that the run can be
 * replayed.
 *
 * The model is byte-exact. Memory from `empty()` is unspecified until written,
 * so every byte carries a "defined" flag and reads only compare defined bytes;
 * kernels propagate the flag (an output word is defined when its inputs are).
 *
 * Operations: create (from every kind of host view, and staging memory),
 * empty, write, clone, view (any byte range, empty ones too), release (also
 * right after use, while the work using the handle is still queued, and of
 * every allocation of a stream), fragment (many small handles, every other
 * one released: what pools that compact pack, moving the survivors), launches of five modelled kernels (static,
 * `CubeCount` and indirect counts, views, handles of any stream, kernels
 * compiled on first launch so the stream holds work behind them), read,
 * readTensor, reads batched in one tick, readMany, deferred reads awaited
 * later, flush (awaited or not), sync, memoryCleanup, memoryUsage checks,
 * persistent allocation windows, tensor groups, profiles, dry runs,
 * installMemoryPools, graph capture (with temporaries allocated inside the
 * window and indirect counts read at replay), replay and destroy, bursts of
 * operations in one tick, invalid calls that must throw at once, and failures
 * that must be queued for the next flush (a kernel that does not compile, a
 * replay of a destroyed graph, a write inside a capture). Each run picks its
 * client options from the seed (tasksMax, stream slots, memory layout,
 * persistent-memory policy) and ends by releasing everything and checking
 * that no memory, page or device buffer is left.
 *
 * This file holds the run itself: the weighted table of operations and the
 * main loop. The pieces live beside it:
 * - _options.ts: the run's options, statistics, failure, `AVOIDABLE` patterns, client options drawn from the seed;
 * - _rng.ts: the seeded random choices;
 * - _kernels.ts: the modelled kernels; _launches.ts: random launches of them with their CPU effects;
 * - _state.ts: the model of live handles and bytes, and the run's bookkeeping;
 * - _ops_*.ts: the operations (memory, read, launch, pools, graph, burst, errors);
 * - _expect.ts: assertions on failures; _finale.ts: the teardown and `destroy()` with work in flight.
 */

import { createClient } from "../../mod.ts";
import { destroyWithWorkInFlight, teardown } from "./_finale.ts";
import { doBurst } from "./_ops_burst.ts";
import { doInvalid, doQueuedError } from "./_ops_errors.ts";
import { doCapture, doDestroyGraph, doReplay } from "./_ops_graph.ts";
import { doDryRun, doIndirect, doLaunch, doProfile } from "./_ops_launch.ts";
import { doCleanup, doClone, doCreate, doEmpty, doFragment, doRelease, doView, doWrite } from "./_ops_memory.ts";
import { doBig, doInstallPools, doPersistent, doReleaseStream, doTensors, doUsage } from "./_ops_pools.ts";
import { doDeferredRead, doDrain, doFlush, doRead, doReadAll, doReadBatch, doReadMany, doSync } from "./_ops_read.ts";
import {
  AVOIDABLE,
  chooseConfig,
  MAX_LIVE,
  ModelFailure,
  type ModelOptions,
  type ModelStats,
  STREAMS,
} from "./_options.ts";
import { makeRng } from "./_rng.ts";
import { ModelState } from "./_state.ts";

export { AVOIDABLE, ModelFailure, type ModelOptions, type ModelStats } from "./_options.ts";
export { affineKernel } from "../_gpu.ts";
export { fill3dKernel, sumKernel, xorKernel } from "./_kernels.ts";

/** One kind of operation: its name (in the statistics), its weight in the random choice, and what it does. */
type Op = { name: string; weight: number; run: (st: ModelState) => Promise<void> | void };

const OPS: readonly Op[] = [
  { name: "create", weight: 9, run: doCreate },
  { name: "empty", weight: 3, run: doEmpty },
  { name: "write", weight: 8, run: doWrite },
  { name: "clone", weight: 4, run: doClone },
  { name: "view", weight: 3, run: doView },
  { name: "release", weight: 9, run: doRelease },
  { name: "fragment", weight: 1.5, run: doFragment },
  { name: "launch", weight: 24, run: doLaunch },
  { name: "read", weight: 5, run: doRead },
  { name: "readBatch", weight: 3, run: doReadBatch },
  { name: "readMany", weight: 3, run: doReadMany },
  { name: "deferredRead", weight: 6, run: doDeferredRead },
  { name: "drain", weight: 3, run: doDrain },
  { name: "flush", weight: 3, run: doFlush },
  { name: "sync", weight: 1.5, run: doSync },
  { name: "cleanup", weight: 2.5, run: doCleanup },
  { name: "releaseStream", weight: 0.4, run: doReleaseStream },
  { name: "burst", weight: 5, run: doBurst },
  { name: "readAll", weight: 1, run: doReadAll },
  { name: "indirect", weight: 2.5, run: doIndirect },
  { name: "persistent", weight: 1, run: doPersistent },
  { name: "tensors", weight: 1.5, run: doTensors },
  { name: "profile", weight: 0.8, run: doProfile },
  { name: "dryRun", weight: 0.6, run: doDryRun },
  { name: "installPools", weight: 0.3, run: doInstallPools },
  { name: "big", weight: 0.05, run: doBig },
  { name: "usage", weight: 0.7, run: doUsage },
  { name: "switch", weight: 4, run: doSwitch },
  { name: "capture", weight: 1.2, run: doCapture },
  { name: "replay", weight: 3, run: doReplay },
  { name: "destroyGraph", weight: 0.8, run: doDestroyGraph },
  { name: "invalid", weight: 3, run: doInvalid },
  { name: "queuedError", weight: 0.4, run: doQueuedError },
];

/** Switches the stream operations use most. */
function doSwitch(st: ModelState): void {
  st.current = st.rand.pick(STREAMS);
  st.note(`switch to stream ${st.current}`);
}

/** The next operation, drawn by weight (adjusted for the number of live handles and graphs). */
function choose(st: ModelState): Op {
  const weight = (op: Op): number => {
    if (op.name === "release" && st.refs.length > MAX_LIVE) return op.weight * 6;
    if ((op.name === "create" || op.name === "empty") && st.refs.length < 4) return op.weight * 4;
    if (op.name === "capture" && st.graphs.length >= 4) return 0;
    return op.weight;
  };
  const total = OPS.reduce((a, op) => a + weight(op), 0);
  let x = st.rand.random() * total;
  for (const op of OPS) {
    x -= weight(op);
    if (x < 0) return op;
  }
  return OPS[0]!;
}

/** Runs one random sequence against a fresh client and the model. */
export async function runModel(options: ModelOptions): Promise<ModelStats> {
  const { seed, steps } = options;
  for (const a of new Set(options.avoid ?? [])) {
    if (!(a in AVOIDABLE)) throw new RangeError(`unknown avoid pattern ${a}`);
  }
  const rand = makeRng(seed);
  const config = options.config ?? chooseConfig(rand.pick);
  const base = await createClient(config);
  const st = new ModelState(options, rand, config, base);
  const started = performance.now();
  const { stats, history } = st;
  if (options.verbose) console.log(`client options: ${JSON.stringify(config)}`);

  try {
    for (st.step = 0; st.step < steps; st.step++) {
      const op = choose(st);
      stats.ops[op.name] = (stats.ops[op.name] ?? 0) + 1;
      try {
        await op.run(st);
        if (options.paranoid) { for (const c of st.clients) await c.flush(); }
      } catch (e) {
        throw new ModelFailure(seed, st.step, history, e, config);
      }
    }
    st.step = steps;
    try {
      await teardown(st);
      await destroyWithWorkInFlight(st);
    } catch (e) {
      throw new ModelFailure(seed, st.step, history, e, config);
    }
  } finally {
    base.destroy();
  }
  stats.steps = steps;
  stats.ms = performance.now() - started;
  return stats;
}
