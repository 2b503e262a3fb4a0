/**
 * Contract under test: random sequences of client operations agree byte for
 * byte with a pure-TypeScript model of every live handle, and leave no memory,
 * page or device buffer behind once everything is released. The operations
 * (see tests/model/_model.ts): create, empty, write, clone, view, release,
 * launches of modelled kernels (static and indirect counts, handles of any
 * stream, kernels compiled on first launch), reads in every form (awaited at
 * once, batched in one tick, readMany, deferred), flush, sync, memoryCleanup,
 * stream switches, persistent windows, tensor groups, profiles, dry runs,
 * installMemoryPools, graph capture/replay/destroy, bursts of operations in
 * one tick, and invalid calls; client options (tasksMax, stream slots, memory
 * layout, persistent-memory policy) are drawn from the seed.
 *
 * Environment (with --allow-env):
 * - `MODEL_SEED=<n>` replays one seed; otherwise the fixed seeds run, plus one
 *   seed taken from the clock, printed so that a failure can be replayed.
 * - `MODEL_STEPS=<n>` operations per seed (default 2500).
 * - `MODEL_VERBOSE=1` prints every operation and the run's statistics.
 * - `MODEL_AVOID=a,b` steers around known-bug patterns (`AVOIDABLE` in _options.ts).
 * - `MODEL_PARANOID=1` flushes every stream after every operation, to find
 *   the one that queued a device error (it changes batching).
 */

import { runModel } from "./_model.ts";
import { chooseConfig, COMPACTING_LAYOUT } from "./_options.ts";
import { makeRng } from "./_rng.ts";

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env: the fixed seeds
  }
}

const FIXED_SEEDS = [1, 2, 3, 4, 0xc0ffee, 20250117];
const STEPS = 2500;

const replay = env("MODEL_SEED");
const steps = Number(env("MODEL_STEPS") ?? STEPS);
const verbose = env("MODEL_VERBOSE") === "1";
const seeds: { seed: number; label: string }[] = replay !== undefined
  ? [{ seed: Number(replay) >>> 0, label: "replayed" }]
  : [
    ...FIXED_SEEDS.map((seed) => ({ seed, label: "fixed" })),
    { seed: Date.now() >>> 0, label: "from the clock" },
  ];

for (const { seed, label } of seeds) {
  Deno.test(`model: ${steps} random operations agree with the CPU model (seed ${seed}, ${label})`, async () => {
    if (label === "from the clock") console.log(`model seed from the clock: ${seed} (replay with MODEL_SEED=${seed})`);
    const stats = await runModel({
      seed,
      steps,
      verbose,
      paranoid: env("MODEL_PARANOID") === "1",
      avoid: (env("MODEL_AVOID") ?? "").split(",").filter((x) => x !== ""),
    });
    if (verbose || replay !== undefined) console.log(stats);
  });
}

/** Seeds run with the compacting layout on every stream (client options otherwise drawn from the seed). */
const COMPACTING_SEEDS = [5, 6, 7];

if (replay === undefined) {
  for (const seed of COMPACTING_SEEDS) {
    Deno.test(`model: ${steps} random operations agree with the CPU model while pools pack whenever they can, moving live memory (seed ${seed})`, async () => {
      const drawn = chooseConfig(makeRng(seed ^ 0x5eed).pick);
      // Persistent windows ignored: every reservation goes to the pools that compact.
      const config = { ...drawn, memory: COMPACTING_LAYOUT, persistentMemory: "disabled" as const };
      const stats = await runModel({ seed, steps, verbose, config, avoid: [] });
      // The layout must really move memory, or this test checks nothing of it.
      if (!(stats.moves! > 30)) throw new Error(`seed ${seed}: only ${stats.moves} slices moved`);
      if (verbose) console.log(stats);
    });
  }
}
