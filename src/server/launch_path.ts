/**
 * The server's launch path: every launch, whichever entry it came through,
 * is checked at the door (`checkLaunch`), finds its stream and pipeline, and
 * goes to the stream's dispatch encoder, unless a dry run or `skip` mode
 * makes it compile only. The object form of `launch` (a `CubeCount` and
 * `KernelArguments`) is spread into the same positional arguments first.
 *
 * @module
 */

import { badCountForm, checkLaunch, type LaunchLimits } from "../contract/launch_checks.ts";
import type { Kernel } from "../contract/kernel.ts";
import type { BufferBinding, CubeCount, InfoWords, KernelArguments, LaunchMode } from "../contract/types.ts";
import type { DeviceLostError } from "../errors.ts";
import type { StreamId } from "../ids.ts";
import type { DeviceContext } from "../stream/device_context.ts";
import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { Stream } from "../stream/stream.ts";

/** What a launch path is built from. */
export interface LaunchPathParts {
  /** The device context. */
  readonly ctx: DeviceContext;
  /** The stream slots' streams by index (read directly). */
  readonly streams: readonly (Stream | undefined)[];
  /** The stream of an id, created on first use. */
  readonly streamOf: (id: StreamId) => Stream;
  /** What the door checks against. */
  readonly limits: LaunchLimits;
  /** True when every launch is logged. */
  readonly logLaunch: boolean;
}

/** The launch path of one server. */
export class LaunchPath {
  /** The error every call throws once the device is gone (set by the server). */
  closed: DeviceLostError | null = null;
  /** Open dry-run windows: while above 0, launches only compile. */
  dryRun = 0;
  #ctx: DeviceContext;
  #streams: readonly (Stream | undefined)[];
  #maxStreams: number;
  #streamOf: (id: StreamId) => Stream;
  #limits: LaunchLimits;
  #logLaunch: boolean;

  /**
   * Creates the path.
   *
   * @param parts The device context, the streams and the door's limits.
   */
  constructor(parts: LaunchPathParts) {
    this.#ctx = parts.ctx;
    this.#streams = parts.streams;
    this.#maxStreams = parts.ctx.settings.maxStreams;
    this.#streamOf = parts.streamOf;
    this.#limits = parts.limits;
    this.#logLaunch = parts.logLaunch;
  }

  /**
   * One launch, positional (see `WebGpuServer.launchRaw`).
   *
   * @param kernel The kernel.
   * @param buffers Storage bindings in order.
   * @param info Info words (empty or null for none).
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect Memory holding `[x, y, z]`, or null for a static count.
   * @param mode `execute` or `skip`.
   * @param stream The launching stream.
   * @param checked True when `checkLaunch` already ran against this server's
   * limits (a worker client checks on the main thread, with the limits its
   * worker reported): the door is skipped. One small body for the steady
   * path, so V8 inlines it into the caller (a launch that is logged, skipped
   * or noted for a warm-up goes out of line); callers pass every argument (no
   * default), so the call's arity always matches.
   */
  launch(
    kernel: Kernel,
    buffers: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
    mode: LaunchMode,
    stream: StreamId,
    checked: boolean,
  ): void {
    if (!checked) checkLaunch(this.#limits, kernel, buffers, info, x, y, z, indirect, mode);
    if (this.closed !== null) throw this.closed;
    if (info !== null && info.length === 0) info = null;
    if (indirect === null && (x === 0 || y === 0 || z === 0)) return;
    const s = (stream < this.#maxStreams ? this.#streams[stream] : undefined) ?? this.#streamOf(stream);
    const entry = this.#ctx.pipelines.get(kernel, buffers.length, info !== null);
    // The steady path ends here; the rest is out of line, so this body stays small enough for V8 to inline into
    // the client's `launch` (V8 inlines up to 460 bytes of bytecode; from a2b7a62 on this body was past that, and
    // each launch paid a call: bench/RESULTS.md, "Launch cost on llvmpipe").
    if (mode !== "execute" || this.dryRun > 0 || this.#logLaunch || s.warmup !== null) {
      this.#unusual(s, entry, kernel, buffers, info, x, y, z, indirect, mode);
      return;
    }
    s.dispatch.launch(entry, buffers, info, x, y, z, indirect);
  }

  /** A launch that is logged, skipped (`skip` mode or a dry run) or noted for a graph's warm-up: see `launch`. */
  #unusual(
    s: Stream,
    entry: PipelineEntry,
    kernel: Kernel,
    buffers: readonly BufferBinding[],
    info: InfoWords | null,
    x: number,
    y: number,
    z: number,
    indirect: BufferBinding | null,
    mode: LaunchMode,
  ): void {
    const dry = this.dryRun > 0;
    if (this.#logLaunch) {
      this.#ctx.logger.log(
        "launch",
        `${s.label}: executing ${kernel.name} [${x}, ${y}, ${z}]${mode === "skip" || dry ? " (skip)" : ""}`,
      );
    }
    if (mode === "skip" || dry) {
      if (entry.state !== "valid") s.errors.watchPipeline(entry);
      // A launch the dry run skips while recording would be missing from the graph: endCapture fails.
      if (dry && s.recorder !== null) s.recorder.dryRunSkips++;
      return;
    }
    if (s.warmup !== null) {
      const count = indirect === null ? [x, y, z] as const : null;
      s.warmup.push({
        kernel: kernel.id,
        name: kernel.name,
        count,
        buffers: buffers.length,
        infoWords: info?.length ?? 0,
      });
    }
    s.dispatch.launch(entry, buffers, info, x, y, z, indirect);
  }

  /**
   * The object form of a launch: a static count spread into `x`, `y`, `z`, a
   * dynamic one into the indirect binding, then `launch`, whose door checks
   * every argument.
   *
   * @param kernel The kernel.
   * @param count Workgroups to dispatch.
   * @param args Buffers and info words.
   * @param mode `execute`, or `skip` to compile and cache only.
   * @param stream The launching stream.
   * @throws {TypeError} When the count is not a `CubeCount`, and whatever the door throws.
   */
  spread(kernel: Kernel, count: CubeCount, args: KernelArguments, mode: LaunchMode, stream: StreamId): void {
    const buffers = args === null || typeof args !== "object" ? undefined : args.buffers;
    const info = args?.info ?? null;
    if (count !== null && typeof count === "object" && count.kind === "static") {
      this.launch(kernel, buffers!, info, count.x, count.y, count.z, null, mode, stream, false);
    } else if (count !== null && typeof count === "object" && count.kind === "dynamic") {
      this.launch(kernel, buffers!, info, 1, 1, 1, count.binding, mode, stream, false);
    } else {
      badCountForm(kernel, count);
    }
  }
}
