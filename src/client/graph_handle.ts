/**
 * `Graph`: the client's handle on a captured graph (CubeCL's `Graph`).
 *
 * @module
 */

import type { CapturedGraph } from "../graph/graph.ts";
import type { GraphId, StreamId } from "../ids.ts";
import type { DeviceLink } from "../contract/device_link.ts";
import type { Stream } from "../stream/stream.ts";

/**
 * A captured sequence of launches that can be replayed any number of times.
 * Replays run on the stream the graph was captured on, against the exact
 * memory used at capture; write new inputs into the same handles between
 * replays. Memory allocated inside the capture window stays pinned until the
 * graph is destroyed; memory you created before it must stay alive.
 *
 * @example Capture once, replay many
 * ```ts
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * const step = defineKernel({
 *   name: "step",
 *   wgsl: `@group(0) @binding(0) var<storage, read_write> src: array<f32>;
 *          @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
 *          @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
 *            if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x] + 1.0; }
 *          }`,
 * });
 * await using client = await createClient();
 * using state = client.create(new Float32Array(64));
 * using scratch = client.empty(64 * 4);
 * using graph = await client.capture(() => {
 *   client.launch(step, [1], [state, scratch]);
 *   client.launch(step, [1], [scratch, state]);
 * }); // the warm-up ran once: state holds 2
 * for (let i = 0; i < 10; i++) graph.replay();
 * console.log((await client.read(state, Float32Array))[0]); // 22
 * ```
 */
export class Graph implements Disposable {
  /** The server's id of the graph. */
  readonly id: GraphId;
  /** The stream it was captured on. */
  readonly stream: StreamId;
  #server: Pick<DeviceLink, "closed" | "replay" | "capturedGraph" | "graphDestroy">;
  #destroyed = false;
  #captured: CapturedGraph | null = null;
  #target: Stream | null = null;

  /**
   * Internal: made by `ComputeClient.capture` and `endCapture`.
   *
   * @param server The device link holding the graph.
   * @param stream The capture stream.
   * @param id The graph's id.
   */
  constructor(
    server: Pick<DeviceLink, "closed" | "replay" | "capturedGraph" | "graphDestroy">,
    stream: StreamId,
    id: GraphId,
  ) {
    this.#server = server;
    this.stream = stream;
    this.id = id;
  }

  /** True once `destroy()` was called. */
  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * Queues a replay: every recorded dispatch is re-encoded into the stream's
   * pass. Failures are queued and raised by the next `flush`, `sync` or `read`.
   */
  replay(): void {
    const g = this.#captured;
    const target = this.#target;
    // Fast path: the graph and its stream, resolved once; every check the server makes still holds.
    if (g !== null && !g.released && target !== null && target.recorder === null && !this.#server.closed) {
      target.dispatch.replay(g);
      return;
    }
    this.#server.replay(this.id, this.stream);
    // In process, the server hands the graph and its stream over for the fast path; through a Worker, nothing.
    const found = this.#server.capturedGraph(this.id) as { graph: CapturedGraph; stream: Stream } | undefined;
    this.#captured = found?.graph ?? null;
    this.#target = found?.stream ?? null;
  }

  /**
   * Destroys the graph and unpins its memory. A replay already queued still
   * runs correctly. Destroying twice is a no-op.
   */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#captured = null; // its tasks, bind groups and stream go with the server's copy
    this.#target = null;
    this.#server.graphDestroy(this.id, this.stream);
  }

  /** Same as `destroy()`, so `using graph = await client.capture(...)` works. */
  [Symbol.dispose](): void {
    this.destroy();
  }
}
