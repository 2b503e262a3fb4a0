/**
 * `startProfile` / `endProfile` of a stream, with device timing (timestamp
 * queries on every pass while a profile is open) or system timing (host
 * clock around completion waits).
 *
 * @module
 */

import { ProfileError } from "../errors.ts";
import type { ProfilingToken } from "../ids.ts";
import type { ProfileDuration } from "../contract/types.ts";
import type { Stream } from "./stream.ts";
import type { DispatchTiming } from "../contract/types.ts";

/**
 * Drains the stream before a profile boundary: device timing needs no device
 * wait (its ticks come from timestamps), system timing waits for the device.
 */
function drainForProfile(s: Stream): Promise<void> {
  return s.profiler !== null ? s.flush() : s.sync();
}

/**
 * Opens a profile on a stream. Queued errors fail the start.
 *
 * @param s The stream.
 * @returns The token.
 */
export async function startProfile(s: Stream): Promise<ProfilingToken> {
  s.refuseWhileRecording("startProfile");
  try {
    await drainForProfile(s);
  } catch (cause) {
    throw new ProfileError("server", "startProfile: the stream had queued errors", { cause });
  }
  if (s.profiler === null) return s.systemProfiler.start();
  s.endPass();
  const token = s.profiler.start();
  s.timestamping = true;
  return token;
}

/**
 * Closes a profile.
 *
 * @param s The stream.
 * @param token A token of this stream.
 * @returns The duration (its ticks resolve once the device work was read back).
 */
export async function endProfile(s: Stream, token: ProfilingToken): Promise<ProfileDuration> {
  if (token === null || typeof token !== "object" || typeof token.id !== "number") {
    throw new ProfileError("not-registered", "endProfile: expected a token returned by startProfile");
  }
  // Refuse an unknown or ended token before draining: the drain would take the
  // stream's queued errors, and with no open profile to fail they would be lost.
  if (!(s.profiler ?? s.systemProfiler).isOpen(token)) {
    throw new ProfileError("not-registered", `endProfile: token ${token.id} is unknown or was already ended`);
  }
  try {
    await drainForProfile(s);
  } catch {
    // drained errors mark the profile as failed; `end` reports them
  }
  if (s.profiler === null) {
    const ticks = s.systemProfiler.end(token);
    return { method: "system", ticks: Promise.resolve(ticks), dispatches: Promise.resolve([]) };
  }
  let dispatches: Promise<DispatchTiming[]>;
  try {
    ({ ticks: dispatches } = s.profiler.end(token));
  } finally {
    s.timestamping = s.profiler.active;
  }
  return { method: "device", ticks: dispatches.then(span), dispatches };
}

/**
 * Closes a profile without draining the stream, for work that failed: its
 * timing is not wanted, and the stream's queued errors stay queued for the
 * next draining call. Does nothing for an unknown or ended token.
 *
 * @param s The stream.
 * @param token A token of this stream.
 */
export function discardProfile(s: Stream, token: ProfilingToken): void {
  if (!(s.profiler ?? s.systemProfiler).isOpen(token)) return;
  try {
    if (s.profiler === null) {
      s.systemProfiler.end(token);
    } else {
      try {
        s.profiler.end(token).ticks.catch(() => {});
      } finally {
        s.timestamping = s.profiler.active;
      }
    }
  } catch {
    // Errors drained while it was open were raised by the call that drained them.
  }
}

/** The interval from the first dispatch's start to the last one's end ({0, 0} without dispatches). */
function span(dispatches: readonly DispatchTiming[]): { start: number; end: number } {
  if (dispatches.length === 0) return { start: 0, end: 0 };
  let start = Infinity;
  let end = -Infinity;
  for (const d of dispatches) {
    if (d.start < start) start = d.start;
    if (d.end > end) end = d.end;
  }
  return { start, end };
}
