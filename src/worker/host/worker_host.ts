/**
 * The worker side of a worker client: a `WebGpuServer` fed by the command
 * ring. The host reads records in order and hands each to its
 * `RecordRunner`, keeps the payloads that arrive by message until their
 * record is reached, runs calls and posts their replies, and ends the
 * Worker after destroying the device (on the client's `destroy`, or after
 * a loss it reports first).
 *
 * The loop runs records for at most a few milliseconds at a time, then lets
 * the worker's event loop turn (device waits complete and messages arrive
 * there); with the ring empty it sleeps on the ring's head without blocking
 * that event loop.
 *
 * @module
 */

import { DeviceLostError } from "../../errors.ts";
import { WebGpuServer } from "../../server/webgpu_server.ts";
import { RingReader } from "./ring_reader.ts";
import { encodeError } from "../wire/error_codec.ts";
import type { CallPayload, InitMessage, WireBinding, WorkerMessage, WorkerStats } from "../wire/protocol.ts";
import { LoopState, Op, opOf, slotsOf } from "../wire/ring_layout.ts";
import { RecordRunner } from "./record_runner.ts";
import { ownThreadId } from "../wire/thread_exit.ts";
import { runCall } from "./worker_calls.ts";
import { parkTurn } from "../../_util/event_loop_turns.ts";

/** Posts a message to the main thread, moving `transfer`. */
export type Post = (message: WorkerMessage, transfer?: Transferable[]) => void;

/** Milliseconds the loop runs records before it lets the worker's event loop turn. */
const SLICE_MS = 4;

/** The server of one worker client, and the loop that feeds it from the ring. */
export class WorkerHost {
  #server: WebGpuServer;
  #ring: RingReader;
  #runner: RecordRunner;
  #post: Post;
  #onClosed: () => void;
  #payloads = new Map<number, unknown>();
  /** The payload id the loop waits for, or -1. */
  #stalledOn = -1;
  #running = false;
  #closed = false;
  /** The device was lost: records are skipped until the main thread's destroy, which comes in its teardown turn. */
  #lostDevice = false;
  /** The channel `#yield` posts to itself through, and the loop waiting for it. */
  #channel = new MessageChannel();
  #turned: () => void = () => {};
  /** Milliseconds spent running records, records run, and loop passes (the `stats` call). */
  #busy = 0;
  /** Calls started and not yet answered (a read waiting for its map, say). */
  #inFlight = 0;
  #records = 0;
  #drains = 0;

  private constructor(server: WebGpuServer, ring: RingReader, post: Post, onClosed: () => void) {
    this.#server = server;
    this.#ring = ring;
    this.#post = post;
    this.#onClosed = onClosed;
    this.#runner = new RecordRunner(server, ring.u32, (id) => this.#take(id));
    this.#channel.port1.onmessage = () => this.#turned();
    server.device.lost.then(() => this.#lost());
  }

  /**
   * Makes the server and starts reading the ring; posts `ready`, or `failed`
   * and calls `onClosed`.
   *
   * @param init The handshake.
   * @param post Posts to the main thread.
   * @param onClosed Called once the host is done (the worker closes itself then).
   * @returns The host, or null when the server could not be made.
   */
  static async start(init: InitMessage, post: Post, onClosed: () => void): Promise<WorkerHost | null> {
    const thread = ownThreadId();
    let server: WebGpuServer;
    try {
      server = await WebGpuServer.create(init.options);
    } catch (e) {
      post({ type: "failed", error: encodeError(e), thread });
      onClosed();
      return null;
    }
    const host = new WorkerHost(server, new RingReader(init.ring), post, onClosed);
    post({
      type: "ready",
      properties: server.properties,
      maxStreams: server.settings.maxStreams,
      fastReads: server.fastReads,
      thread,
    });
    host.#kick();
    return host;
  }

  /**
   * A payload arrived: keep it for its record, and resume the loop if it waited for it.
   *
   * @param id The payload id.
   * @param data The payload.
   */
  onPayload(id: number, data: unknown): void {
    this.#ring.received(id);
    this.#payloads.set(id, data);
    if (this.#stalledOn === id) {
      this.#stalledOn = -1;
      this.#kick();
    }
  }

  #kick(): void {
    if (this.#running || this.#closed) return;
    this.#running = true;
    this.#loop();
  }

  /**
   * Runs the ring until it stalls on a payload or the host closes. `#running`
   * is cleared synchronously where the loop returns: cleared in a reaction to
   * the loop's promise, a payload handled first (seen under load) found the
   * loop still marked running and never restarted it.
   */
  async #loop(): Promise<void> {
    const ring = this.#ring;
    try {
      while (!this.#closed) {
        ring.note(LoopState.running);
        const start = performance.now();
        const state = this.#drain(start);
        this.#busy += performance.now() - start;
        this.#drains++;
        if (ring.takeSpaceRequest()) this.#post({ type: "space" });
        if (state === "closed") return ring.note(LoopState.closed);
        if (state === "stalled") return ring.note(LoopState.stalled, this.#stalledOn);
        if (state === "slice") {
          ring.note(LoopState.yielding);
          await this.#yield();
        } else {
          ring.note(LoopState.sleeping);
          await ring.waitForRecords();
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /** Runs records until the ring is empty, a payload is missing, the time slice ends, or the host closes. */
  #drain(start: number): "empty" | "stalled" | "slice" | "closed" {
    if (this.#lostDevice) return this.#skipToDestroy();
    const ring = this.#ring;
    const runner = this.#runner;
    const u32 = ring.u32;
    let n = 0;
    let available = ring.available();
    try {
      while (available > 0) {
        const at = ring.at();
        const word = u32[at]!;
        const op = opOf(word);
        if (op === Op.pad) {
          const skip = ring.toEnd();
          ring.consume(skip);
          available -= skip;
          continue;
        }
        if (op === Op.launch ? !runner.launch(word, at) : !this.#run(op, word, at)) return "stalled";
        const slots = slotsOf(word);
        ring.consume(slots);
        this.#records++;
        if (op !== Op.launch && this.#closed) return "closed";
        if ((++n & 63) === 0) {
          ring.release(); // the writer sees the room every 64 records
          if (performance.now() - start > SLICE_MS) return "slice";
        }
        available -= slots;
        if (available <= 0) available = ring.available();
      }
      return "empty";
    } finally {
      ring.release();
    }
  }

  /** After a loss: skips records (the main thread rejected their work) until the destroy, and runs that. */
  #skipToDestroy(): "empty" | "closed" {
    const ring = this.#ring;
    try {
      let available = ring.available();
      while (available > 0) {
        const word = ring.u32[ring.at()]!;
        const op = opOf(word);
        const slots = op === Op.pad ? ring.toEnd() : slotsOf(word);
        ring.consume(slots);
        if (op === Op.destroy) {
          this.#destroy();
          return "closed";
        }
        available -= slots;
        if (available <= 0) available = ring.available();
      }
      return "empty";
    } finally {
      ring.release();
    }
  }

  /** Runs a record other than a launch; false when it waits for its payload (nothing was done). */
  #run(op: number, word: number, at: number): boolean {
    switch (op) {
      case Op.kernel:
        return this.#runner.kernel(at);
      case Op.write: {
        const recycle = this.#runner.write(word, at);
        if (recycle === false) return false;
        if (recycle !== null) this.#post({ type: "recycle", buffer: recycle }, [recycle]);
        return true;
      }
      case Op.call: {
        const id = this.#ring.u32[at + 1]!;
        const data = this.#take(id) as CallPayload | undefined;
        if (data === undefined) return false;
        this.#call(id, data);
        return true;
      }
      case Op.destroy:
        this.#destroy();
        return true;
      default:
        this.#runner.command(op, at);
        return true;
    }
  }

  /**
   * Lets the worker's event loop turn once between time slices. With no call
   * in flight, a message to itself (tens of µs, where `setTimeout(0)` takes
   * 1–4 ms) lets messages in. With one in flight (a read waiting for its
   * map), a turn that makes the loop wait (`parkTurn`, ~0.1–0.3 ms): Deno
   * notices a device wait's 10 ms sleep only then, and a read issued while the
   * main thread kept streaming launches never settled without it.
   */
  #yield(): Promise<void> {
    if (this.#inFlight > 0) return parkTurn();
    return new Promise((resolve) => {
      this.#turned = resolve;
      this.#channel.port2.postMessage(null);
    });
  }

  /** Takes a payload, or notes the loop waits for it (undefined). */
  #take(id: number): unknown {
    const data = this.#payloads.get(id);
    if (data === undefined) {
      this.#stalledOn = id;
      return undefined;
    }
    this.#payloads.delete(id);
    return data;
  }

  /** Starts a call (in ring order) and posts its reply when it settles. */
  #call(id: number, call: CallPayload): void {
    const server = this.#server;
    const capture = call.method === "beginCapture" || call.method === "endCapture" ? call.stream : -1;
    const state = () => capture < 0 || server.closed ? undefined : server.stream(capture).capture.state;
    const handles = this.#runner.handles;
    const binding = (b: WireBinding, where: string) => handles.binding(b.slot, b.offsetStart, b.offsetEnd, where);
    let promise;
    try {
      promise = call.method === "stats"
        ? Promise.resolve({ value: this.#stats(), transfer: [] })
        : runCall(server, call, binding);
    } catch (e) {
      promise = Promise.reject(e);
    }
    this.#inFlight++;
    promise.then(
      (r) => {
        this.#inFlight--;
        this.#post({ type: "reply", id, ok: true, value: r.value, capture: state() }, r.transfer);
      },
      (e) => {
        this.#inFlight--;
        this.#post({ type: "reply", id, ok: false, error: encodeError(e), capture: state() });
      },
    );
  }

  #stats(): WorkerStats {
    const { pipelinesCompiled, bindGroupsCreated, graphCount, passesBegun } = this.#server;
    return {
      pipelinesCompiled,
      bindGroupsCreated,
      graphCount,
      passesBegun,
      busyMs: this.#busy,
      records: this.#records,
      drains: this.#drains,
    };
  }

  /**
   * The device was lost (not destroyed by the client): say so, and end as a
   * destroy does once the main thread sends one, in its teardown turn (Workers
   * that tore down at once crashed the process on NVIDIA).
   */
  #lost(): void {
    if (this.#closed || this.#lostDevice) return;
    this.#lostDevice = true;
    let error: unknown;
    try {
      this.#server.checkAlive();
      error = new DeviceLostError("the worker's device was lost", { reason: "unknown" });
    } catch (e) {
      error = e;
    }
    this.#post({ type: "lost", error: encodeError(error) });
  }

  /** Destroys the server (and its device), says so, and lets the worker close. */
  #destroy(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#server.destroy();
    } finally {
      this.#runner.handles.clear();
      // After the replies the destroy settled (they are posted from promise reactions).
      setTimeout(() => {
        this.#channel.port1.close();
        this.#post({ type: "closed" });
        this.#ring.note(LoopState.exiting); // what a main thread ending the process waits for
        this.#onClosed();
      }, 0);
    }
  }
}
