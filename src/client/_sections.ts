/**
 * The client's sugar that runs a user function between two server calls:
 * `profile(fn)` (start and end a profile around it, in an exclusive section)
 * and `capture(fn)` (a warm-up run, then a recorded run, into a graph).
 *
 * @module
 */

import type { ProfileDuration } from "../contract/types.ts";
import type { GraphId, StreamId } from "../ids.ts";
import type { DeviceLink } from "../contract/device_link.ts";
import { TraceWriteError } from "../errors.ts";
import { summarizeDispatches, writeChromeTrace } from "../profile/trace.ts";
import type { ProfileOptions, ProfileResult } from "./client_types.ts";
import { describe } from "../_util/describe.ts";

/**
 * Runs `fn` inside a profile on `stream`, as an exclusive section. An
 * exception in `fn` discards the profile without draining the stream (its
 * queued errors stay for the next draining call) and is re-raised as is.
 * The trace is written last; when that fails, the measurements are carried
 * by the `TraceWriteError` (see `ComputeClient.profile`).
 *
 * @param link The device.
 * @param stream The stream.
 * @param fn The work to measure.
 * @param options `trace` writes a Chrome trace of the dispatches.
 * @returns The result and the measurements.
 * @throws {ProfileError} When errors were drained while the profile was open.
 * @throws {TraceWriteError} When the trace could not be written, after `fn`
 * ran; its `profile` holds the result and the measurements.
 */
export function profileSection<T>(
  link: DeviceLink,
  stream: StreamId,
  fn: () => T | Promise<T>,
  options: ProfileOptions,
): Promise<ProfileResult<T>> {
  const bad = badTraceOption(options);
  if (bad !== null) return Promise.reject(bad); // before `fn` runs: a refused call changes nothing
  return link.exclusive(async () => {
    const token = await link.startProfile(stream);
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      link.discardProfile(stream, token);
      throw e;
    }
    return measuredProfile(result, await link.endProfile(stream, token), options);
  });
}

/**
 * Checks `profile`'s `trace` option (both clients), before anything runs.
 *
 * @param options The options given.
 * @returns The error to reject with, or null when `trace` is absent, a path or a URL.
 */
export function badTraceOption(options: ProfileOptions | undefined): TypeError | null {
  const trace: unknown = options?.trace;
  if (trace === undefined || typeof trace === "string" || trace instanceof URL) return null;
  return new TypeError(`profile: trace must be a file path or URL, got ${describe(trace)}`);
}

/**
 * A profile's result once its duration is known: ticks, dispatches, the
 * per-kernel summary, and the trace file when asked for (both clients' `profile`).
 *
 * @param result What the profiled function returned.
 * @param duration Its duration, as `endProfile` gave it.
 * @param options `trace`: where to write a Chrome trace of the dispatches.
 * @returns The measurements.
 * @throws {TraceWriteError} When the trace cannot be written; it carries the measurements.
 */
export async function measuredProfile<T>(
  result: T,
  duration: ProfileDuration,
  options: ProfileOptions,
): Promise<ProfileResult<T>> {
  const [ticks, dispatches] = await Promise.all([duration.ticks, duration.dispatches]);
  const measured: ProfileResult<T> = {
    result,
    duration,
    ticks,
    nanos: ticks.end - ticks.start,
    dispatches,
    kernels: summarizeDispatches(dispatches),
  };
  if (options.trace !== undefined) {
    try {
      await writeChromeTrace(options.trace, dispatches);
    } catch (cause) {
      // `fn` ran and was measured: the measurements travel with the error rather than being lost.
      throw new TraceWriteError(options.trace, measured, cause);
    }
  }
  return measured;
}

/**
 * Captures `fn` on `stream`: arms capture, runs `fn` as the warm-up, then
 * again while recording, and stores the graph only when both runs launched
 * the same work. An exception disarms the capture and is re-raised.
 *
 * @param link The device.
 * @param stream The stream.
 * @param fn The work to capture.
 * @returns The id of the captured graph.
 * @throws {GraphStateError} For a capture already under way on the stream, or
 * a recording whose launches differ from the warm-up's.
 */
export async function captureSection(link: DeviceLink, stream: StreamId, fn: () => unknown): Promise<GraphId> {
  link.graphPrepare(stream);
  try {
    await fn();
    await link.beginCapture(stream);
    await fn();
  } catch (e) {
    if (link.captureState(stream) !== "none") link.graphAbort(stream);
    throw e;
  }
  return await link.endCapture(stream, true);
}
