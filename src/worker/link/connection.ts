/**
 * The main thread's end of a worker client: it starts the Worker that holds
 * the server, writes commands into the ring, posts payloads, keeps the
 * calls awaiting a reply, the kernels already sent, the capture state of each
 * stream slot, and the client's closed state. Handles of a worker client
 * belong to their connection (`Handle.owner`), as a main-thread client's
 * handles belong to its server.
 *
 * The main thread never calls a WebGPU method of the worker's device: it
 * only writes shared memory and posts messages.
 *
 * @module
 */

import { ExclusiveLock } from "../../_util/exclusive_lock.ts";
import { Handle } from "../../contract/handle.ts";
import type { Kernel } from "../../contract/kernel.ts";
import { checkLaunch, type LaunchLimits, launchLimits } from "../../contract/launch_checks.ts";
import type { BufferBinding, DeviceProperties, InfoWords, LaunchMode, MemoryKind } from "../../contract/types.ts";
import type { MemoryAllocationMode } from "../../contract/memory_types.ts";
import { DeviceLostError, GraphStateError, ServerError } from "../../errors.ts";
import type { GraphId, StreamId } from "../../ids.ts";
import { CaptureStateMachine } from "../../graph/capture_state.ts";
import { HostStagingPool } from "../../memory/host_staging.ts";
import { ContiguousLayoutPolicy } from "../../memory/layout_policy.ts";
import type { ServerOptions } from "../../options/server_options.ts";
import { RingWriter } from "../wire/command_ring.ts";
import { reviveError } from "../wire/error_codec.ts";
import type { CallPayload, WorkerMessage, WritePayload } from "../wire/protocol.ts";
import { RemoteMemory } from "./remote_memory.ts";
import { hi, lo, LoopState, Op, WRITE_INLINE_MAX } from "../wire/ring_layout.ts";
import { writeLaunch, writeShortRecord, writeStreamRecord, writeWrite } from "./ring_records.ts";
import { type ExitParticipant, teardownInTurn, threadExited, workerClosed, workerOpened } from "../wire/thread_exit.ts";
import { startWorker } from "./worker_start.ts";

/** Options of a connection that tests and benches set. */
export interface ConnectionOptions {
  /** Slots of the command ring (a power of two, at least 64). @default 16384 (1 MiB) */
  ringSlots?: number;
}

/** A call awaiting its reply. */
interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The stream of a capture call (its reply carries the slot's capture state), else -1. */
  stream: number;
}

const DEFAULT_RING_SLOTS = 16384;

/** The main thread's end of one worker client (shared by its clients of every stream). */
export class WorkerConnection implements ExitParticipant {
  /** The device's properties, as the worker reported them. */
  readonly properties: DeviceProperties;
  /** Stream slots of the server. */
  readonly maxStreams: number;
  /** Whether the worker's server reads through early maps (see `ComputeClient.fastReads`). */
  readonly fastReads: boolean;
  /** What launches are checked against on the main thread (the same door as the server's). */
  readonly limits: LaunchLimits;
  /** Where tensors of a group go in one reservation (the server's policy). */
  readonly layoutPolicy: ContiguousLayoutPolicy;
  /** The lock of `exclusive()` and `profile()` sections. */
  readonly lock: ExclusiveLock = new ExclusiveLock();
  /** Host staging memory lent by `staging()`. */
  readonly hostStaging: HostStagingPool = new HostStagingPool();
  /** Open dry-run windows. */
  dryRunDepth = 0;
  #worker: Worker;
  #ring: RingWriter;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #kernels = new WeakMap<Kernel, number>();
  #kernelCount = 0;
  #lastKernel: Kernel | null = null;
  #lastIndex = 0;
  #captures = new Map<number, CaptureStateMachine>();
  #error: Error | null = null;
  #destroyed = false;
  #destroySent = false;
  #workerClosed = false;
  #ended: PromiseWithResolvers<void> = Promise.withResolvers<void>();
  #exited: Promise<void> | null = null;
  #closedAt = 0;
  /** The Worker's thread id, where it could be read (the process waits for that thread at its end). */
  readonly thread: number | null;
  /** Slots of released memory, reused by later allocations (ring order keeps the worker's table right). */
  #freeSlots: number[] = [];
  #nextSlot = 0;
  #free = (memory: RemoteMemory): void => {
    if (this.#error !== null) return;
    writeShortRecord(this.#ring, Op.free, memory.slot);
    this.#freeSlots.push(memory.slot);
  };

  private constructor(worker: Worker, ring: RingWriter, ready: Extract<WorkerMessage, { type: "ready" }>) {
    this.#worker = worker;
    this.#ring = ring;
    this.properties = ready.properties;
    this.maxStreams = ready.maxStreams;
    this.fastReads = ready.fastReads;
    this.thread = ready.thread;
    this.limits = launchLimits(this, ready.properties);
    this.layoutPolicy = new ContiguousLayoutPolicy(ready.properties.memory.alignment);
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => this.#onMessage(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      this.#close(new ServerError(`the worker client's Worker failed: ${e.message}`));
      this.#closedNow();
    };
    workerOpened(this);
  }

  /**
   * Starts a Worker, makes the server there, and connects to it.
   *
   * @param options Server options (cloneable).
   * @param connection Ring size.
   * @returns The connection.
   * @throws What making the server threw in the worker (revived), or
   * `Deno.errors.NotCapable` when the Worker's modules cannot be read.
   */
  static async open(options: ServerOptions, connection: ConnectionOptions = {}): Promise<WorkerConnection> {
    const { worker, buffers, ready } = await startWorker(options, connection.ringSlots ?? DEFAULT_RING_SLOTS);
    return new WorkerConnection(worker, new RingWriter(buffers), ready);
  }

  /** True once the device is lost or the client destroyed. */
  get closed(): boolean {
    return this.#error !== null;
  }

  /**
   * Resolves once the Worker has destroyed its device and closed itself. Its
   * thread may still be tearing down: the process waits for it at `unload`.
   */
  get ended(): Promise<void> {
    return this.#ended.promise;
  }

  /** Resolves once the Worker has closed itself and its thread has exited (see `threadExited`). */
  get exited(): Promise<void> {
    return this.#exited ??= this.#ended.promise.then(() => threadExited(this.thread, this.#closedAt));
  }

  /** Kernels sent to the worker so far (each once). */
  get kernelsSent(): number {
    return this.#kernelCount;
  }

  /** @ignore The ring's writer (tests and benches look at its spill). */
  get ring(): RingWriter {
    return this.#ring;
  }

  /** Throws the error every call raises once the device is gone. */
  checkAlive(): void {
    if (this.#error !== null) throw this.#error;
  }

  /**
   * Reserves memory in the worker (in ring order) and returns its handle.
   *
   * @param size Bytes (checked by the caller).
   * @param stream The stream whose pools serve it.
   * @param kind `count` for an indirect count of 12 bytes (the count pool).
   * @returns A handle owning one reference.
   */
  alloc(size: number, stream: StreamId, kind: MemoryKind = "storage"): Handle {
    const memory = new RemoteMemory(this.#freeSlots.pop() ?? this.#nextSlot++, this.#free);
    memory.boundBy(this, kind === "count");
    const op = kind === "count" ? Op.allocCount : Op.alloc;
    writeStreamRecord(this.#ring, op, stream, memory.slot, lo(size), hi(size), memory.id);
    return new Handle(this, memory, stream, size);
  }

  /**
   * Writes bytes into memory: inline in the ring when small; else shared
   * memory as it is (the worker copies it: one result delivered to several
   * workers is copied by none here), a lent staging view's buffer moved (when
   * `take`), or a copy moved.
   *
   * @param binding The destination (checked by the caller).
   * @param bytes Exactly its bytes.
   * @param stream The calling stream.
   * @param take Move a lent staging view's buffer (false: copy it, the caller recycles it).
   */
  write(binding: BufferBinding, bytes: Uint8Array, stream: StreamId, take = true): void {
    const staging = take && this.hostStaging.owns(bytes);
    if (bytes.byteLength <= WRITE_INLINE_MAX) {
      writeWrite(this.#ring, binding, stream, bytes, 0);
      if (staging) this.hostStaging.recycle(bytes);
      return;
    }
    let id: number;
    if (bytes.buffer instanceof SharedArrayBuffer) {
      const data: WritePayload = {
        buffer: bytes.buffer,
        offset: bytes.byteOffset,
        length: bytes.byteLength,
        recycle: false,
      };
      id = this.#payload(data);
    } else {
      const buffer = staging ? bytes.buffer as ArrayBuffer : bytes.slice().buffer;
      const data: WritePayload = staging
        ? { buffer, offset: bytes.byteOffset, length: bytes.byteLength, recycle: true }
        : { buffer, offset: 0, length: bytes.byteLength, recycle: false };
      id = this.#payload(data, [buffer]);
    }
    writeWrite(this.#ring, binding, stream, null, id);
  }

  /**
   * Queues a launch (the link's launch path): checked at the door here, with
   * the limits the worker reported, then written into the ring; the worker
   * skips its door.
   *
   * @param kernel The kernel (sent once).
   * @param buffers The bindings.
   * @param info Info words, or null.
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @param indirect The indirect count, or null.
   * @param mode The mode.
   * @param stream The stream.
   * @param checked True when the door already ran.
   * @throws {TypeError} {RangeError} {ResourceLimitError} For a bad argument; {DeviceLostError} once closed.
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
    if (!checked) checkLaunch(this.limits, kernel, buffers, info, x, y, z, indirect, mode);
    if (this.#error !== null) throw this.#error;
    if (indirect === null && (x === 0 || y === 0 || z === 0)) return;
    if (info !== null && info.length === 0) info = null;
    const k = kernel === this.#lastKernel ? this.#lastIndex : this.#kernelIndex(kernel);
    if (writeLaunch(this.#ring, k, buffers, info, -1, x, y, z, indirect, mode, stream)) return;
    // Too many info words to inline: they travel by payload.
    const copy = new Uint32Array(info!.length);
    copy.set(new Uint32Array(info!.buffer, info!.byteOffset, info!.length)); // bits, whatever the type
    const id = this.#payload(copy, [copy.buffer]);
    writeLaunch(this.#ring, k, buffers, info, id, x, y, z, indirect, mode, stream);
  }

  #kernelIndex(kernel: Kernel): number {
    let index = this.#kernels.get(kernel);
    if (index === undefined) {
      index = this.#kernelCount++;
      this.#kernels.set(kernel, index);
      const { name, wgsl, entryPoint, constants, id } = kernel;
      writeShortRecord(this.#ring, Op.kernel, index, this.#payload({ name, wgsl, entryPoint, constants, id }));
    }
    this.#lastKernel = kernel;
    this.#lastIndex = index;
    return index;
  }

  /**
   * Runs a call in the worker, in ring order.
   *
   * @param call The method and its arguments.
   * @returns Its value; rejects with what it threw there (revived).
   */
  call(call: CallPayload): Promise<unknown> {
    if (this.#error !== null) return Promise.reject(this.#error);
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    const capture = call.method === "beginCapture" || call.method === "endCapture" ? call.stream : -1;
    this.#pending.set(id, { resolve, reject, stream: capture });
    this.#worker.postMessage({ type: "payload", id, data: call });
    writeShortRecord(this.#ring, Op.call, id);
    return promise;
  }

  /** Posts a payload and returns its id. */
  #payload(data: unknown, transfer: Transferable[] = []): number {
    const id = this.#nextId++;
    this.#worker.postMessage({ type: "payload", id, data }, transfer);
    return id;
  }

  /** Queues a replay (for `Graph`). */
  replay(graph: GraphId, stream: StreamId): void {
    this.checkAlive();
    writeStreamRecord(this.#ring, Op.replay, stream, graph);
  }

  /** The replay fast path of `Graph` has nothing to hold on this side. */
  capturedGraph(_graph: GraphId): undefined {
    return undefined;
  }

  /** Queues a graph's destruction (for `Graph`); a no-op once closed. */
  graphDestroy(graph: GraphId, _stream: StreamId): void {
    if (this.#error === null) writeShortRecord(this.#ring, Op.graphDestroy, graph);
  }

  /** The capture state of a stream's slot, as the main thread knows it. */
  capture(stream: StreamId): CaptureStateMachine {
    const slot = stream % this.maxStreams;
    let m = this.#captures.get(slot);
    if (m === undefined) this.#captures.set(slot, m = new CaptureStateMachine());
    return m;
  }

  /**
   * Arms capture on a stream, refusing at once what the server would refuse.
   *
   * @param stream The stream.
   * @throws {GraphStateError} When already armed or recording, or inside a dry run.
   */
  graphPrepare(stream: StreamId): void {
    this.checkAlive();
    if (this.dryRunDepth > 0) {
      throw new GraphStateError(
        "graphPrepare",
        "a dry run is open: its launches only compile, so a capture would record nothing; capture after the dry run ends",
      );
    }
    this.capture(stream).prepare();
    writeStreamRecord(this.#ring, Op.graphPrepare, stream);
  }

  /** Disarms a stream's capture. */
  graphAbort(stream: StreamId): void {
    this.capture(stream).abort();
    if (this.#error === null) writeStreamRecord(this.#ring, Op.graphAbort, stream);
  }

  /** Opens (+1) or closes (-1) a dry-run window. */
  dryRun(delta: 1 | -1): void {
    this.dryRunDepth = Math.max(0, this.dryRunDepth + delta);
    if (this.#error === null) writeShortRecord(this.#ring, Op.dryRun, delta === 1 ? 1 : 2);
  }

  /** Queues an allocation mode switch (checked by the caller). */
  allocationMode(mode: MemoryAllocationMode, stream: StreamId): void {
    writeStreamRecord(this.#ring, Op.allocationMode, stream, mode === "persistent" ? 1 : 0);
  }

  /** Queues a cleanup of every stream's pools. */
  memoryCleanup(): void {
    this.hostStaging.clear();
    writeShortRecord(this.#ring, Op.memoryCleanup);
  }

  /**
   * Ends the client: later calls throw, and pending ones reject with,
   * `DeviceLostError` (`destroyed`); the worker destroys the device after
   * the commands already queued, then closes itself. Workers tear down in
   * turn (see `teardownInTurn`): the destroy goes to the worker once the
   * teardowns before it have ended. Twice is a no-op.
   */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#close(
      new DeviceLostError("the client was destroyed; create a new client to continue", { reason: "destroyed" }),
    );
    if (this.#workerClosed) return;
    void teardownInTurn(() => {
      this.#sendDestroy();
      return this.exited;
    });
  }

  /** True once the Worker was told to destroy its device. */
  get destroying(): boolean {
    return this.#destroySent;
  }

  /** Tells the Worker to destroy its device and close (once; not after it closed). */
  #sendDestroy(): void {
    if (this.#destroySent || this.#workerClosed) return;
    this.#destroySent = true;
    writeShortRecord(this.#ring, Op.destroy);
  }

  /**
   * Ends the client at the end of the process (`unload`, no event loop turn
   * to come): queues the destroy unless done, and blocks until the Worker is
   * about to close itself.
   *
   * @param ms The longest wait.
   * @returns True when the Worker said it closes.
   */
  closeNow(ms: number): boolean {
    if (this.#workerClosed) return true;
    this.#destroyed = true;
    this.#sendDestroy();
    this.#ring.flush();
    return this.#ring.waitForLoop(LoopState.exiting, ms);
  }

  /**
   * Notes that the Worker has closed itself. Its thread still tears its device
   * down after that: a process that exits meanwhile can crash in the driver,
   * so the process waits for the thread at its end, and the next teardown
   * waits for it too.
   */
  #closedNow(): void {
    this.#workerClosed = true;
    this.#closedAt = performance.now();
    workerClosed(this.thread, this);
    this.#ended.resolve();
  }

  /** Sets the closed error (the first one stays) and rejects every pending call with it. */
  #close(error: Error): void {
    this.#error ??= error;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(this.#error);
  }

  #onMessage(m: WorkerMessage): void {
    switch (m.type) {
      case "reply": {
        const p = this.#pending.get(m.id);
        if (p === undefined) return;
        this.#pending.delete(m.id);
        if (p.stream >= 0 && m.capture !== undefined) this.#syncCapture(p.stream, m.capture);
        if (m.ok) p.resolve(m.value);
        else p.reject(reviveError(m.error!));
        return;
      }
      case "space":
        return void this.#ring.drainSpill();
      case "recycle":
        return this.hostStaging.adopt(m.buffer);
      case "lost":
        // The loss is the error calls see; the Worker waits for the destroy, sent in its teardown turn.
        this.#close(reviveError(m.error));
        return this.destroy();
      case "closed":
        this.#close(new DeviceLostError("the worker client's device is gone", { reason: "destroyed" }));
        this.#worker.onmessage = null;
        this.#closedNow();
        return;
    }
  }

  /** Follows the server's capture state of a stream after a capture call. */
  #syncCapture(stream: StreamId, state: "none" | "prepared" | "recording"): void {
    const m = this.capture(stream);
    if (m.state === state) return;
    m.abort();
    if (state !== "none") m.prepare();
    if (state === "recording") m.begin();
  }
}
