/**
 * The graph capture lifecycle of a server (CubeCL's wgpu graph methods): the
 * state transitions, memory priming, error draining and the registry of
 * captured graphs.
 *
 * @module
 */

import { GraphStateError, ServerUnhealthyError } from "../errors.ts";
import { allocateGraphId, type GraphId } from "../ids.ts";
import type { Stream } from "../stream/stream.ts";
import { buildGraph, type CapturedGraph, firstDifference, GraphRecorder } from "../graph/graph.ts";
import type { CountCopier } from "../kernel/count_copy.ts";

/**
 * Refuses to start a capture inside a dry run: its launches only compile, so
 * the graph would record nothing.
 */
function refuseInDryRun(what: string, dryRun: boolean): void {
  if (dryRun) {
    throw new GraphStateError(
      what,
      "a dry run is open: its launches only compile, so a capture would record nothing; capture after the dry run ends",
    );
  }
}

/** Captured graphs of one server. */
export class GraphRegistry {
  #graphs = new Map<GraphId, CapturedGraph>();
  #device: GPUDevice;
  #alignment: number;
  #copier: CountCopier;

  /**
   * Creates the registry.
   *
   * @param device The device.
   * @param alignment Dynamic storage offset alignment (for graph info buffers).
   * @param copier The device's count copier (for counts a graph copies before its dispatch).
   */
  constructor(device: GPUDevice, alignment: number, copier: CountCopier) {
    this.#device = device;
    this.#alignment = alignment;
    this.#copier = copier;
  }

  /** Graphs alive. */
  get size(): number {
    return this.#graphs.size;
  }

  /**
   * Arms capture: allocations go to the persistent pool and are primed.
   *
   * @param s The stream.
   * @param dryRun True while a dry run is open.
   * @throws {GraphStateError} When already prepared or recording, or inside a
   * dry run; the stream is left as it was.
   */
  prepare(s: Stream, dryRun: boolean): void {
    refuseInDryRun("graphPrepare", dryRun);
    s.submit();
    s.capture.prepare();
    s.memory.captureBegin();
    s.warmup = [];
  }

  /**
   * Disarms a prepared or recording capture without building a graph: the
   * recording's pins are dropped and the stream is usable as before.
   *
   * @param s The stream.
   */
  abort(s: Stream): void {
    s.recorder?.pins.forEach((m) => m.unpin());
    s.recorder = null;
    s.warmup = null;
    s.errors.sink = null;
    s.memory.captureAbort();
    s.capture.abort();
  }

  /**
   * Starts recording, after submitting the warm-up and draining its errors.
   * If the warm-up left errors, the capture is disarmed and they are raised;
   * the stream can be prepared again.
   *
   * @param s The stream.
   * @param dryRun True while a dry run is open.
   * @throws {GraphStateError} When the stream is not prepared, or inside a dry
   * run (the stream stays prepared).
   */
  async begin(s: Stream, dryRun: boolean): Promise<void> {
    refuseInDryRun("beginCapture", dryRun);
    s.capture.checkBegin();
    try {
      await s.flush();
    } catch (e) {
      this.abort(s);
      throw e;
    }
    s.capture.begin();
    s.memory.capturePrimingEnd();
    s.recorder = new GraphRecorder();
    s.recorder.warmup = s.warmup ?? [];
    s.warmup = null;
    s.errors.sink = s.recorder.windowErrors;
  }

  /**
   * Stops recording and stores the graph. Nothing is submitted. A rejected
   * write, a failed binding or a launch skipped by a dry run inside the window
   * makes it fail (the recording is dropped, the stream stays usable); so
   * does, with `sameAsWarmup`, a recording whose launches differ from the
   * warm-up's (`capture(fn)` runs `fn` twice: replays would repeat the second
   * run, which is not what the first did).
   *
   * @param s The stream.
   * @param sameAsWarmup True to require the recorded launches to match the warm-up's.
   * @returns The graph's id.
   */
  async end(s: Stream, sameAsWarmup = false): Promise<GraphId> {
    s.capture.end();
    const recorder = s.recorder!;
    s.recorder = null;
    s.errors.sink = null; // errors queued from now on are drained below
    const retained = s.memory.captureEnd();
    const difference = sameAsWarmup ? firstDifference(recorder.warmup, recorder.shapes) : null;
    if (difference !== null) {
      s.errors.push(
        new GraphStateError(
          "capture",
          `the function launched other work while recording than in its warm-up, so replays would not do what it does: ${difference}; make it launch the same kernels each time it runs`,
        ),
      );
    }
    if (recorder.dryRunSkips > 0) {
      s.errors.push(
        new GraphStateError(
          "launch",
          `${recorder.dryRunSkips} launch(es) inside a dry run were compiled but not recorded, so the graph would miss them; capture outside client.dryRun`,
        ),
      );
    }
    await s.errors.settle();
    const errors = s.errors.drain();
    for (const e of recorder.windowErrors) if (!errors.includes(e)) errors.push(e);
    if (errors.length > 0) {
      for (const m of retained) m.drop();
      for (const m of recorder.pins) m.unpin();
      throw new ServerUnhealthyError(s.slot, errors);
    }
    const id = allocateGraphId();
    this.#graphs.set(
      id,
      buildGraph(this.#device, {
        id,
        slot: s.slot,
        recorder,
        retained,
        alignment: this.#alignment,
        copier: this.#copier,
      }),
    );
    return id;
  }

  /**
   * The graph of an id, or undefined when unknown or destroyed.
   *
   * @param id The graph.
   * @returns The graph.
   */
  get(id: GraphId): CapturedGraph | undefined {
    return this.#graphs.get(id);
  }

  /**
   * Queues a replay on the graph's stream. Failures are queued, never thrown.
   *
   * @param id The graph.
   * @param s The calling stream.
   * @param streamOf Resolves a stream slot.
   */
  replay(id: GraphId, s: Stream, streamOf: (slot: number) => Stream): void {
    const graph = this.#graphs.get(id);
    if (graph === undefined) {
      s.errors.push(new GraphStateError("replay", `graph ${id} is unknown or was already destroyed`));
      return;
    }
    const target = streamOf(graph.slot);
    if (target.recorder !== null || s.recorder !== null) {
      const recording = target.recorder !== null ? target : s;
      // Queued on the recording stream, whose recording remembers it: endCapture fails.
      recording.errors.push(
        new GraphStateError("replay", `cannot replay graph ${id} while the stream records a graph`),
      );
      return;
    }
    target.dispatch.replay(graph);
  }

  /**
   * Destroys a graph (a no-op when unknown). Its stream is submitted first, so
   * a replay already encoded reaches the queue before its memory can be reused.
   *
   * @param id The graph.
   * @param streamOf Resolves a stream slot.
   */
  destroy(id: GraphId, streamOf: (slot: number) => Stream): void {
    const graph = this.#graphs.get(id);
    if (graph === undefined) return;
    this.#graphs.delete(id);
    streamOf(graph.slot).submit();
    graph.release();
  }

  /** Releases every graph (server teardown). */
  clear(): void {
    for (const g of this.#graphs.values()) g.release();
    this.#graphs.clear();
  }
}
