/**
 * System timing: the host clock around completion waits, for devices without
 * `timestamp-query` (CubeCL's `TimestampProfiler`). Start and end each wait
 * for the device to go idle, so the measured interval includes Deno's fixed
 * ~10 ms completion delay of the end wait; use device timing when available.
 *
 * @module
 */

import { ProfileError, type ServerError } from "../errors.ts";
import { allocateTokenId, type ProfilingToken, type StreamId } from "../ids.ts";

/** Host-clock profiles of one stream. */
export class SystemProfiler {
  #stream: StreamId;
  #open = new Map<number, { start: number; error: ServerError[] | null }>();

  /**
   * Creates the profiler.
   *
   * @param stream The stream slot.
   */
  constructor(stream: StreamId) {
    this.#stream = stream;
  }

  /**
   * Opens a profile at the current time (call after waiting for the device).
   *
   * @returns The token.
   */
  start(): ProfilingToken {
    const token = { id: allocateTokenId(), stream: this.#stream };
    this.#open.set(token.id, { start: performance.now() * 1e6, error: null });
    return token;
  }

  /**
   * Closes a profile at the current time (call after waiting for the device).
   *
   * @param token The token.
   * @returns Start and end in nanoseconds of the host clock.
   * @throws {ProfileError} `not-registered` or `unknown` (errors drained while open).
   */
  end(token: ProfilingToken): { start: number; end: number } {
    const open = this.#open.get(token.id);
    if (open === undefined) {
      throw new ProfileError("not-registered", `endProfile: token ${token.id} is unknown or was already ended`);
    }
    this.#open.delete(token.id);
    if (open.error !== null) {
      throw new ProfileError("unknown", `endProfile: errors were drained while profile ${token.id} was open`, {
        cause: open.error[0],
      });
    }
    return { start: open.start, end: performance.now() * 1e6 };
  }

  /** Marks every open profile as failed. */
  fail(errors: readonly ServerError[]): void {
    for (const p of this.#open.values()) p.error = [...(p.error ?? []), ...errors];
  }
}
