/**
 * A server's draining calls besides `read`: `flush`, `sync` (which also
 * collects per-kernel device times for the profiling log), the profile
 * boundaries and the capture boundaries. Each raises the stream's queued
 * errors; each checks the device first, and every promise is guarded so that
 * it rejects when the device is lost.
 *
 * @module
 */

import { slotOf } from "../_util/slot.ts";
import type { GraphRegistry } from "./graph_registry.ts";
import { ProfileError } from "../errors.ts";
import type { GraphId, ProfilingToken, StreamId } from "../ids.ts";
import { endProfile, startProfile } from "../stream/stream_profiles.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import type { Stream } from "../stream/stream.ts";
import type { StreamHost, StreamSlots } from "./stream_slots.ts";
import type { ProfileDuration } from "../contract/types.ts";

const ignore = (): void => {};
const READBACK = "reading profile timestamps back failed";

/** What `DrainingCalls` is built with. */
export interface DrainingCallsOptions {
  /** The server whose streams it drains. */
  server: StreamHost;
  /** Its device context (guards promises against device loss; holds the logger). */
  ctx: DeviceContext;
  /** Its captured graphs. */
  graphs: GraphRegistry;
  /** Its stream slots (a token's stream is looked up there, never built). */
  slots: StreamSlots;
}

/** Flush, sync, profile and capture boundaries of one server's streams. */
export class DrainingCalls {
  #server: StreamHost;
  #ctx: DeviceContext;
  #graphs: GraphRegistry;
  #slots: StreamSlots;

  /**
   * Creates the draining calls of a server.
   *
   * @param options The server, its device context and its graph registry.
   */
  constructor(options: DrainingCallsOptions) {
    this.#server = options.server;
    this.#ctx = options.ctx;
    this.#graphs = options.graphs;
    this.#slots = options.slots;
  }

  /**
   * Submits a stream's queued work and drains its errors (see `ComputeServer.flush`).
   *
   * @param stream The stream.
   * @returns Rejects with `DeviceLostError` once the device is gone, and with
   * `ServerUnhealthyError` when errors were queued.
   */
  flush(stream: StreamId): Promise<void> {
    try {
      this.#server.checkAlive();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#ctx.guard(this.#server.stream(stream).flush());
  }

  /**
   * Submits a stream and waits for the device, then drains its errors (see
   * `ComputeServer.sync`). With device timing and `profiling` logs at `basic`
   * or above, the stream's per-kernel device times are then collected into
   * the logger.
   *
   * @param stream The stream.
   * @returns Rejects with `DeviceLostError` once the device is gone,
   * `GraphStateError` while the stream records a graph, and
   * `ServerUnhealthyError` when errors were queued.
   */
  async sync(stream: StreamId): Promise<void> {
    const server = this.#server;
    server.checkAlive();
    server.stream(stream).refuseWhileRecording("sync");
    const s = server.stream(stream);
    await this.#ctx.guard(s.sync());
    const logger = this.#ctx.logger;
    // Read back what is still pending: each timing read goes into the logger's summary.
    if (s.profiler !== null && logger.profiling !== "disabled" && logger.profiling !== "minimal") {
      await this.#ctx.guard(
        s.profiler.collect().catch((cause) => Promise.reject(this.#ctx.lossOf(`${s.label}: ${READBACK}`, cause))),
      );
    }
  }

  /**
   * Opens a profile on a stream (see `ComputeServer.startProfile`).
   *
   * @param stream The stream.
   * @returns A token for `endProfile`; rejects with `DeviceLostError` once the
   * device is gone, and with `ProfileError` when the stream had queued errors.
   */
  async startProfile(stream: StreamId): Promise<ProfilingToken> {
    this.#server.checkAlive();
    return await this.#ctx.guard(startProfile(this.#server.stream(stream)));
  }

  /**
   * Closes a profile (see `ComputeServer.endProfile`).
   *
   * @param stream The stream the token was opened on (a token naming another is refused).
   * @param token A token from `startProfile`, ended once.
   * @returns The duration, its ticks and dispatches guarded too (either may
   * be left unawaited: a rejection of the other is not unhandled); rejects with
   * `DeviceLostError` once the device is gone, and with `ProfileError`
   * (`not-registered`) for an unknown or already ended token, including one
   * naming a stream that does not exist (no stream is built for it) or
   * another stream than `stream`.
   */
  async endProfile(stream: StreamId, token: ProfilingToken): Promise<ProfileDuration> {
    this.#server.checkAlive();
    const ctx = this.#ctx;
    const s = this.#tokenStream(stream, token);
    const d = await ctx.guard(endProfile(s, token));
    const lost = (cause: unknown): Promise<never> => Promise.reject(ctx.lossOf(`${s.label}: ${READBACK}`, cause));
    const ticks = ctx.guard(d.ticks.catch(lost));
    const dispatches = ctx.guard(d.dispatches.catch(lost));
    // A caller may await only one half: the other's rejection must not go unhandled (it still rejects when awaited).
    ticks.catch(ignore);
    dispatches.catch(ignore);
    return { method: d.method, ticks, dispatches };
  }

  /**
   * The stream a token was opened on: the one it names, or `stream` when it
   * names none.
   *
   * @throws {ProfileError} `not-registered` when it names a stream that does
   * not exist (no profile can have been opened there), or another stream than
   * `stream` (as in CubeCL, a stream knows only its own tokens).
   */
  #tokenStream(stream: StreamId, token: ProfilingToken): Stream {
    const named: unknown = token?.stream;
    if (named === undefined) return this.#server.stream(stream);
    const s = typeof named === "number" ? this.#slots.streams[named] : undefined;
    if (s === undefined) {
      throw new ProfileError(
        "not-registered",
        `endProfile: token ${String(token.id)} names stream ${String(named)}, which has no profiles`,
      );
    }
    if (named !== slotOf(stream, this.#ctx.settings.maxStreams)) {
      // Tokens live in their stream's profiler (contract 6): another stream does not know it.
      throw new ProfileError(
        "not-registered",
        `endProfile: token ${
          String(token.id)
        } was opened on stream ${named} but ended on stream ${stream}; end it on its own stream`,
      );
    }
    return s;
  }

  /**
   * Starts recording a graph on a stream (see `ComputeServer.beginCapture`).
   *
   * @param stream The stream, prepared with `graphPrepare`.
   * @param dryRun True while a dry run is open (the capture is refused).
   * @returns Rejects with `DeviceLostError` once the device is gone, with
   * `GraphStateError` when the stream is not prepared or already recording or
   * a dry run is open, and with `ServerUnhealthyError` when errors were queued.
   */
  async beginCapture(stream: StreamId, dryRun = false): Promise<void> {
    this.#server.checkAlive();
    await this.#ctx.guard(this.#graphs.begin(this.#server.stream(stream), dryRun));
  }

  /**
   * Stops recording and stores the graph (see `ComputeServer.endCapture`).
   *
   * @param stream The recording stream.
   * @param sameAsWarmup True to fail when the recorded launches differ from the warm-up's (`capture(fn)`).
   * @returns The graph's id; rejects with `DeviceLostError` once the device is
   * gone, with `GraphStateError` when the stream is not recording, and with
   * `ServerUnhealthyError` when errors were queued.
   */
  async endCapture(stream: StreamId, sameAsWarmup = false): Promise<GraphId> {
    this.#server.checkAlive();
    return await this.#ctx.guard(this.#graphs.end(this.#server.stream(stream), sameAsWarmup));
  }
}
