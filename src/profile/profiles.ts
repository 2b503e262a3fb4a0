/**
 * `startProfile` / `endProfile` of a stream, with device timing (timestamp
 * queries on every pass while a profile is open) or system timing (host
 * clock around completion waits).
 *
 * @module
 */

import { GraphStateError, ProfileError, ServerUnhealthyError } from "../errors.ts";
import type { ProfilingToken } from "../ids.ts";
import type { ProfileDuration } from "../server/types.ts";
import type { Stream } from "../stream/stream.ts";

function refuseWhileRecording(s: Stream, what: string): void {
  if (s.recorder !== null) {
    throw new GraphStateError(
      what,
      "the stream is recording a graph; reads, syncs and profiles are refused until endCapture",
    );
  }
}

/**
 * Opens a profile on a stream. Queued errors fail the start.
 *
 * @param s The stream.
 * @returns The token.
 */
export async function startProfile(s: Stream): Promise<ProfilingToken> {
  refuseWhileRecording(s, "startProfile");
  if (s.profiler !== null) {
    await s.awaitHeld();
    s.submit();
    await s.settle();
    const errors = s.drainErrors();
    if (errors.length > 0) {
      throw new ProfileError("server", "startProfile: the stream had queued errors", {
        cause: new ServerUnhealthyError(s.slot, errors),
      });
    }
    s.endPass();
    const token = s.profiler.start();
    s.timestamping = true;
    return token;
  }
  try {
    await s.sync();
  } catch (cause) {
    throw new ProfileError("server", "startProfile: the stream had queued errors", { cause });
  }
  return s.systemProfiler.start();
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
  if (s.profiler !== null) {
    await s.awaitHeld();
    s.submit();
    await s.settle();
    s.drainErrors(); // marks open profiles as failed
    let result: ReturnType<NonNullable<Stream["profiler"]>["end"]>;
    try {
      result = s.profiler.end(token);
    } finally {
      s.timestamping = s.profiler.active;
    }
    return {
      method: "device",
      ticks: result.ticks.then((d) =>
        d.length === 0
          ? { start: 0, end: 0 }
          : { start: Math.min(...d.map((x) => x.start)), end: Math.max(...d.map((x) => x.end)) }
      ),
      dispatches: result.ticks,
    };
  }
  try {
    await s.sync();
  } catch {
    // drained errors mark the profile as failed; `end` reports them
  }
  const ticks = s.systemProfiler.end(token);
  return { method: "system", ticks: Promise.resolve(ticks), dispatches: Promise.resolve([]) };
}
