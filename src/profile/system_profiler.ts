/**
 * System timing: the host clock around completion waits, for devices without
 * `timestamp-query` (CubeCL's `TimestampProfiler`). Start and end each wait
 * for the device to go idle, so the measured interval includes Deno's fixed
 * ~10 ms completion delay of the end wait; use device timing when available.
 *
 * @module
 */

import type { ServerError } from "../errors.ts";
import type { ProfilingToken, StreamId } from "../ids.ts";
import { OpenProfiles } from "./_open_profiles.ts";

/** Host-clock profiles of one stream. */
export class SystemProfiler {
  /** Start of each open profile, in nanoseconds of the host clock. */
  #open: OpenProfiles<number>;

  /**
   * Creates the profiler.
   *
   * @param stream The stream slot.
   */
  constructor(stream: StreamId) {
    this.#open = new OpenProfiles(stream);
  }

  /**
   * Opens a profile at the current time (call after waiting for the device).
   *
   * @returns The token.
   */
  start(): ProfilingToken {
    return this.#open.open(performance.now() * 1e6);
  }

  /**
   * Whether a token names a profile open on this stream.
   *
   * @param token The token.
   * @returns True until the profile is ended.
   */
  isOpen(token: ProfilingToken): boolean {
    return this.#open.has(token);
  }

  /**
   * Closes a profile at the current time (call after waiting for the device).
   *
   * @param token The token.
   * @returns Start and end in nanoseconds of the host clock.
   * @throws {ProfileError} `not-registered` or `unknown` (errors drained while open).
   */
  end(token: ProfilingToken): { start: number; end: number } {
    return { start: this.#open.close(token), end: performance.now() * 1e6 };
  }

  /** Marks every open profile as failed. */
  fail(errors: readonly ServerError[]): void {
    this.#open.fail(errors);
  }
}
