/**
 * A scripted measurer for tuner tests: candidates log their name when they
 * run, and the measurer answers each run with the time scripted for the
 * candidate that ran (or the failure it was scripted to queue).
 */

import type { RunOutcome, TuneCandidate, TuneMeasurer } from "../../tune.ts";

/** A candidate's scripted time: nanoseconds, one per sample (the last repeats), or a failure to report. */
export type Script = number | readonly number[] | { readonly queue: string };

/** The fake device and what it saw. */
export interface Scripted {
  /** The measurer. */
  readonly measurer: TuneMeasurer;
  /** Every candidate run, in order (tuning and winner runs alike). */
  readonly calls: string[];
  /** Rounds measured so far. */
  rounds: number;
  /** A candidate that logs its name and returns `name:input`. */
  // deno-lint-ignore no-explicit-any
  candidate(name: string, extra?: Partial<TuneCandidate<number, string, any>>): TuneCandidate<number, string, any>;
}

/**
 * Creates a scripted device.
 *
 * @param times Each candidate's script, by name; a candidate without one is unmeasured.
 * @returns The device.
 */
export function scripted(times: Readonly<Record<string, Script>>): Scripted {
  const calls: string[] = [];
  const measured = new Map<string, number>();
  const s: Scripted = {
    calls,
    rounds: 0,
    measurer: {
      method: "device",
      async round(runs, options): Promise<RunOutcome[]> {
        s.rounds++;
        const out: RunOutcome[] = [];
        for (const run of runs) {
          options?.signal?.throwIfAborted();
          const before = calls.length;
          try {
            await run();
          } catch (error) {
            out.push({ kind: "failure", error });
            continue;
          }
          const name = calls.length > before ? calls[calls.length - 1]! : undefined;
          const script = name === undefined ? undefined : times[name];
          if (script === undefined) {
            out.push({ kind: "unmeasured", reason: "no timed dispatch" });
          } else if (typeof script === "object" && "queue" in script) {
            out.push({ kind: "failure", error: new Error(script.queue) });
          } else {
            const n = measured.get(name!) ?? 0;
            measured.set(name!, n + 1);
            const t = typeof script === "number" ? script : script[Math.min(n, script.length - 1)]!;
            out.push({ kind: "sample", nanos: t });
          }
        }
        return out;
      },
    },
    candidate(name, extra = {}) {
      return {
        name,
        run: (input: number) => {
          calls.push(name);
          return `${name}:${input}`;
        },
        ...extra,
      };
    },
  };
  return s;
}

/** A log sink that keeps lines. */
export function captureLog(): { lines: string[]; log: (level: "info" | "warn", message: string) => void } {
  const lines: string[] = [];
  return { lines, log: (level, message) => lines.push(`${level}: ${message}`) };
}

/**
 * A device with order effects: each sample of `inner` scaled by
 * `factor(position)`, the run's position in its round from 0 (the first run
 * after a device wait, a clock that ramps within a round).
 *
 * @param inner The measurer to scale.
 * @param factor The scale of a run's time by its position in the round.
 * @returns The measurer.
 */
export function withOrderEffect(inner: TuneMeasurer, factor: (position: number) => number): TuneMeasurer {
  return {
    method: inner.method,
    async round(runs, options) {
      const out = await inner.round(runs, options);
      return out.map((o, position) => o.kind === "sample" ? { kind: "sample", nanos: o.nanos * factor(position) } : o);
    },
  };
}

/**
 * A noisy device: each sample of `inner` times a seeded random factor with a
 * heavy tail (most within ±15%, one in eight two to four times slower), the
 * same for a seed in every process.
 *
 * @param inner The measurer to add noise to.
 * @param seed The noise's seed.
 * @returns The measurer.
 */
export function withNoise(inner: TuneMeasurer, seed: number): TuneMeasurer {
  let s = seed >>> 0;
  const random = () => { // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    method: inner.method,
    async round(runs, options) {
      const out = await inner.round(runs, options);
      return out.map((o) => {
        if (o.kind !== "sample") return o;
        const jitter = 0.85 + 0.3 * random();
        const spike = random() < 0.125 ? 2 + 2 * random() : 1;
        return { kind: "sample", nanos: o.nanos * jitter * spike };
      });
    },
  };
}
