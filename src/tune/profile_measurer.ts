/**
 * `profileMeasurer`: a `TuneMeasurer` over a client's profiling calls, with
 * one device wait per round.
 *
 * **Device timing** (`timestamp-query`). While a profile is open every
 * dispatch gets its own timestamped pass, and profiles overlap freely. A
 * round, inside one exclusive section, opens a profile before each run and
 * ends them all after the last run:
 *
 * ```
 * start₀ run₀ flush  start₁ run₁ flush  …  startₙ₋₁ runₙ₋₁ flush  end₀ … endₙ₋₁  (one map wait)
 * ```
 *
 * Profile `j` covers the dispatches of runs `j … n−1`, so run `j`'s are the
 * first `len(j) − len(j+1)` of profile `j`'s list; its sample is the sum of
 * their device times. The flush after each run submits it and drains the
 * errors its work queued (compilation errors are checked there, with no
 * device wait), so a failure is pinned on the run that caused it. A drain
 * also fails every profile open at the time, so the runs before a failing one
 * lose their measurement: they are measured again in a second pass (one more
 * wait, only in a round where something failed).
 *
 * **System timing** (no `timestamp-query`): the host clock between
 * `sync()`s, one sync after each run, less the time of an empty sync measured
 * first: n + 2 waits per round, and a resolution of about a millisecond.
 *
 * @module
 */

import type { RoundOptions, RunOutcome, TuneMeasurer } from "./measurer.ts";

/** What the measurer needs from a client: `ComputeClient` has all of it. */
export interface ProfilingClient<Token> {
  /** `timingMethod`: `device` with timestamp queries, else `system`. */
  readonly properties: { readonly timingMethod: "device" | "system" };
  /** Runs `fn` with the device held. */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Opens a profile (draining queued errors first: they reject it). */
  startProfile(): Promise<Token>;
  /** Closes a profile; rejects when errors were drained while it was open. */
  endProfile(token: Token): Promise<{
    readonly dispatches: Promise<readonly { readonly start: number; readonly end: number }[]>;
  }>;
  /** Submits and drains queued errors (no device wait). */
  flush(): Promise<void>;
  /** Waits for the device, draining queued errors. */
  sync(): Promise<void>;
}

/** The one queued error of a drain, or the drain's error itself. */
function culprit(e: unknown): unknown {
  const errors = (e as { errors?: unknown })?.errors;
  return Array.isArray(errors) && errors.length === 1 ? errors[0] : e;
}

const failure = (error: unknown): RunOutcome => ({ kind: "failure", error });

/**
 * A measurer over `client`.
 *
 * @example Tune with a client (what `client.autotune` does)
 * ```ts ignore
 * import { createClient } from "@denogpu/runtime";
 * import { profileMeasurer, Tuner } from "@denogpu/runtime/tune";
 * const client = await createClient();
 * const tuner = new Tuner({ measurer: profileMeasurer(client) });
 * const out = await tuner.tune(matmulSet, { a, b, c, m, n, k });
 * ```
 *
 * @param client The client (its stream is the one measured).
 * @returns The measurer.
 */
export function profileMeasurer<Token>(client: ProfilingClient<Token>): TuneMeasurer {
  const method = client.properties.timingMethod;
  return {
    method,
    async round(runs, options = {}) {
      // A client's exclusive section wraps what it throws: carry the error (an abort) out as a value.
      const r = await client.exclusive(() =>
        (method === "device" ? deviceRound(client, runs, options) : systemRound(client, runs, options))
          .then((outcomes) => ({ outcomes }), (error: unknown) => ({ error }))
      );
      if ("error" in r) throw r.error;
      return r.outcomes;
    },
  };
}

async function deviceRound<Token>(
  client: ProfilingClient<Token>,
  runs: readonly (() => unknown)[],
  options: RoundOptions,
): Promise<RunOutcome[]> {
  const out: (RunOutcome | undefined)[] = runs.map(() => undefined);
  let pending = runs.map((_, i) => i);
  for (let blameless = 0; pending.length > 0;) {
    const lost = await devicePass(client, runs, pending, out, options);
    // A pass where nothing failed yet nothing was measured: a drain no run caused. Once more, then give up.
    if (lost.length === pending.length && ++blameless === 2) {
      for (const i of lost) out[i] = failure(new Error("the round's profiles failed twice with no run to blame"));
      break;
    }
    pending = lost;
  }
  return out.map((o) => o ?? failure(new Error("not measured")));
}

/** Measures `indices` in one pass; returns those whose measurement was lost to another run's failure. */
async function devicePass<Token>(
  client: ProfilingClient<Token>,
  runs: readonly (() => unknown)[],
  indices: readonly number[],
  out: (RunOutcome | undefined)[],
  { signal }: RoundOptions,
): Promise<number[]> {
  const opened: { index: number; token: Token }[] = [];
  let aborted = false;
  try {
    for (const i of indices) {
      signal?.throwIfAborted();
      let token: Token;
      try {
        token = await client.startProfile();
      } catch {
        token = await client.startProfile(); // errors queued before the round (not ours) were drained: once more
      }
      opened.push({ index: i, token });
      try {
        await runs[i]!();
      } catch (e) {
        out[i] = failure(e);
      }
      try {
        await client.flush();
      } catch (e) {
        out[i] ??= failure(culprit(e));
      }
    }
  } catch (e) {
    aborted = true;
    throw e;
  } finally {
    if (aborted) {
      for (const { token } of opened) {
        await client.endProfile(token).then((d) => d.dispatches.catch(() => {}), () => {});
      }
    }
  }
  const lists = await Promise.all(opened.map(async ({ token }) => {
    try {
      return await (await client.endProfile(token)).dispatches;
    } catch {
      return null; // errors were drained while it was open: measured again if the run itself did not fail
    }
  }));
  const lost: number[] = [];
  opened.forEach(({ index }, j) => {
    if (out[index] !== undefined) return;
    const list = lists[j];
    const next = lists[j + 1];
    if (list === null || list === undefined || next === null) return void lost.push(index);
    const own = list.slice(0, list.length - (next?.length ?? 0));
    if (own.length === 0) {
      out[index] = { kind: "unmeasured", reason: "it dispatched nothing that was timed" };
      return;
    }
    out[index] = { kind: "sample", nanos: own.reduce((s, d) => s + (d.end - d.start), 0) };
  });
  return lost;
}

async function systemRound<Token>(
  client: ProfilingClient<Token>,
  runs: readonly (() => unknown)[],
  { signal }: RoundOptions,
): Promise<RunOutcome[]> {
  await client.sync().catch(() => {}); // errors queued before the round are not the runs'
  let t0 = performance.now();
  await client.sync();
  let t1 = performance.now();
  const overhead = t1 - t0;
  t0 = t1;
  const out: RunOutcome[] = [];
  for (const run of runs) {
    signal?.throwIfAborted();
    let failed: RunOutcome | undefined;
    try {
      await run();
    } catch (e) {
      failed = failure(e);
    }
    try {
      await client.sync();
    } catch (e) {
      failed ??= failure(culprit(e));
    }
    t1 = performance.now();
    out.push(failed ?? { kind: "sample", nanos: Math.max(0, t1 - t0 - overhead) * 1e6 });
    t0 = t1;
  }
  return out;
}
