import type { DispatchTiming } from "../contract/types.ts";
/**
 * Per-kernel summaries and Chrome trace files of profiled dispatches. The
 * trace is the JSON "Trace Event Format" that Perfetto and `chrome://tracing`
 * open: one complete ("X") event per dispatch, one track per stream.
 *
 * @module
 */

/** Device time of one kernel over a profile. */
export interface KernelSummary {
  /** Kernel name. */
  readonly name: string;
  /** Dispatches of it. */
  readonly count: number;
  /** Total device time, in nanoseconds. */
  readonly nanos: number;
}

/**
 * Sums dispatch timings per kernel, longest total first.
 *
 * @example Usage
 * ```ts
 * import { summarizeDispatches } from "./trace.ts";
 * console.log(summarizeDispatches([
 *   { name: "a", stream: 0, start: 0, end: 10 },
 *   { name: "b", stream: 0, start: 10, end: 40 },
 *   { name: "a", stream: 0, start: 40, end: 45 },
 * ])); // [{ name: "b", count: 1, nanos: 30 }, { name: "a", count: 2, nanos: 15 }]
 * ```
 *
 * @param dispatches Timings from a profile.
 * @returns One summary per kernel.
 */
export function summarizeDispatches(dispatches: readonly DispatchTiming[]): KernelSummary[] {
  const by = new Map<string, { count: number; nanos: number }>();
  for (const d of dispatches) {
    const e = by.get(d.name) ?? { count: 0, nanos: 0 };
    e.count++;
    e.nanos += d.end - d.start;
    by.set(d.name, e);
  }
  return [...by].map(([name, e]) => ({ name, ...e })).sort((a, b) => b.nanos - a.nanos);
}

/** One event of a Chrome trace. */
export interface TraceEvent {
  /** Event name (the kernel). */
  name: string;
  /** Category. */
  cat: string;
  /** Phase: "X" (complete) or "M" (metadata). */
  ph: "X" | "M";
  /** Start, in microseconds. */
  ts: number;
  /** Duration, in microseconds. */
  dur?: number;
  /** Process id. */
  pid: number;
  /** Thread id (the stream). */
  tid: number;
  /** Extra fields. */
  args: Record<string, unknown>;
}

/**
 * Builds a Chrome trace (Trace Event Format) with one event per dispatch.
 *
 * @param dispatches Timings from a profile.
 * @param name Process name shown by the viewer.
 * @returns The trace object; `JSON.stringify` it to write a file.
 */
export function chromeTrace(
  dispatches: readonly DispatchTiming[],
  name = "@denogpu/runtime",
): { traceEvents: TraceEvent[]; displayTimeUnit: "ns" } {
  const events: TraceEvent[] = [{ name: "process_name", cat: "", ph: "M", ts: 0, pid: 1, tid: 0, args: { name } }];
  for (const stream of new Set(dispatches.map((d) => d.stream))) {
    events.push({
      name: "thread_name",
      cat: "",
      ph: "M",
      ts: 0,
      pid: 1,
      tid: stream,
      args: { name: `stream ${stream}` },
    });
  }
  dispatches.forEach((d, i) =>
    events.push({
      name: d.name,
      cat: "dispatch",
      ph: "X",
      ts: d.start / 1000,
      dur: (d.end - d.start) / 1000,
      pid: 1,
      tid: d.stream,
      args: { index: i, deviceNanos: d.end - d.start },
    })
  );
  return { traceEvents: events, displayTimeUnit: "ns" };
}

/**
 * Writes a Chrome trace of the dispatches to `path` (needs write permission).
 *
 * @param path Destination file.
 * @param dispatches Timings from a profile.
 */
export async function writeChromeTrace(path: string | URL, dispatches: readonly DispatchTiming[]): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(chromeTrace(dispatches)));
}
