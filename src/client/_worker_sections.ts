/**
 * A worker client's sections that run user code between server calls:
 * `profile(fn)` and `capture(fn)`, as `_sections.ts` runs them for a
 * main-thread client, with the calls made through the connection. The
 * profile's duration crosses settled; the trace is written on the main
 * thread.
 *
 * @module
 */

import type { ProfileDuration, ProfileTicks } from "../contract/types.ts";
import type { DispatchTiming } from "../contract/types.ts";
import type { GraphId, ProfilingToken, StreamId } from "../ids.ts";
import type { WorkerConnection } from "../worker/connection.ts";
import { encodeValue, reviveValue } from "../worker/error_codec.ts";
import type { WireDuration } from "../worker/worker_calls.ts";
import type { ProfileOptions, ProfileResult } from "./client_types.ts";
import { badTraceOption, measuredProfile } from "./_sections.ts";

/** A settled half of a duration as a promise again; a rejection nobody awaits is not reported as unhandled. */
function asPromise<T>(half: WireDuration["ticks"]): Promise<T> {
  if (half.ok) return Promise.resolve(half.value as T);
  const p = Promise.reject(reviveValue(half.error));
  p.catch(() => {});
  return p;
}

/**
 * Closes a profile through the connection.
 *
 * @param conn The connection.
 * @param stream The stream.
 * @param token The token (anything the caller passed).
 * @returns The duration.
 */
export async function endProfileOn(conn: WorkerConnection, stream: StreamId, token: unknown): Promise<ProfileDuration> {
  const wire = await conn.call({ method: "endProfile", stream, token: encodeValue(token) }) as WireDuration;
  return {
    method: wire.method,
    ticks: asPromise<ProfileTicks>(wire.ticks),
    dispatches: asPromise<readonly DispatchTiming[]>(wire.dispatches),
  };
}

/**
 * Runs `fn` inside a profile on `stream`, as an exclusive section (see
 * `profileSection`).
 *
 * @param conn The connection.
 * @param stream The stream.
 * @param fn The work to measure.
 * @param options `trace` writes a Chrome trace of the dispatches.
 * @returns The result and the measurements.
 */
export function profileOn<T>(
  conn: WorkerConnection,
  stream: StreamId,
  fn: () => T | Promise<T>,
  options: ProfileOptions,
): Promise<ProfileResult<T>> {
  const bad = badTraceOption(options);
  if (bad !== null) return Promise.reject(bad);
  return conn.lock.run(async () => {
    conn.checkAlive();
    const token = await conn.call({ method: "startProfile", stream }) as ProfilingToken;
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      conn.call({ method: "discardProfile", stream, token }).catch(() => {});
      throw e;
    }
    return measuredProfile(result, await endProfileOn(conn, stream, token), options);
  });
}

/**
 * Captures `fn` on `stream` through the connection (see `captureSection`).
 *
 * @param conn The connection.
 * @param stream The stream.
 * @param fn The work to capture.
 * @returns The id of the captured graph.
 */
export async function captureOn(conn: WorkerConnection, stream: StreamId, fn: () => unknown): Promise<GraphId> {
  conn.graphPrepare(stream);
  try {
    await fn();
    await conn.call({ method: "beginCapture", stream });
    await fn();
  } catch (e) {
    if (conn.capture(stream).state !== "none") conn.graphAbort(stream);
    throw e;
  }
  return await conn.call({ method: "endCapture", stream, sameAsWarmup: true }) as GraphId;
}
