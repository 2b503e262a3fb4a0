/**
 * Running the records of a worker client's command ring on its server:
 * launches (memory by slot, info words inline or by payload), allocations,
 * releases, kernels, writes, and the graph, dry-run and memory commands.
 * `WorkerHost` reads the ring and hands each record here.
 *
 * Nothing a record does throws past it: what the server refuses while
 * running a record the main thread already checked is queued on the
 * record's stream, as a device-side failure is, and raised by the next
 * draining call there. A record whose payload has not arrived yet does
 * nothing and returns false; the host runs it again once it has.
 *
 * @module
 */

import type { Handle } from "../../contract/handle.ts";
import type { Kernel } from "../../contract/kernel.ts";
import type { BufferBinding } from "../../contract/types.ts";
import { ServerError } from "../../errors.ts";
import type { StreamId } from "../../ids.ts";
import { defineKernel } from "../../kernel/define_kernel.ts";
import type { LaunchPath } from "../../server/launch_path.ts";
import type { WebGpuServer } from "../../server/webgpu_server.ts";
import { HandleTable } from "./handle_table.ts";
import type { KernelPayload, WritePayload } from "../wire/protocol.ts";
import {
  HAS_VIEWS,
  INFO_NONE,
  INFO_PAYLOAD,
  join,
  LAUNCH_FIXED,
  LAUNCH_INDIRECT,
  LAUNCH_SKIP,
  Op,
  WRITE_FIXED,
  WRITE_INLINE,
} from "../wire/ring_layout.ts";

/** Takes a record's payload, or returns undefined (and notes the wait) when it has not arrived. */
export type TakePayload = (id: number) => unknown;

/** Runs ring records on a server. */
export class RecordRunner {
  /** The memory the worker holds for its client, by slot. */
  readonly handles: HandleTable;
  #path: LaunchPath;
  #server: WebGpuServer;
  #words: Uint32Array;
  #take: TakePayload;
  #kernels: Kernel[] = [];
  /** Scratch arrays of bindings by count, and of info words by length (no allocation per launch). */
  #buffers: (Handle | BufferBinding)[][] = [];
  #info: Uint32Array[] = [];

  /**
   * Creates the runner.
   *
   * @param server The worker's server.
   * @param words The ring's words.
   * @param take Takes a payload by id.
   */
  constructor(server: WebGpuServer, words: Uint32Array, take: TakePayload) {
    this.#server = server;
    this.#path = server.launchPath;
    this.#words = words;
    this.#take = take;
    this.handles = new HandleTable(server);
  }

  /**
   * Runs a launch record.
   *
   * @param word The record's first word.
   * @param at Its index in the ring's words.
   * @returns False when its info words' payload has not arrived.
   */
  launch(word: number, at: number): boolean {
    const w = this.#words;
    const infoWord = w[at + 8]!;
    let info: Uint32Array | null = null;
    if ((word & INFO_PAYLOAD) !== 0) {
      info = this.#take(infoWord) as Uint32Array | undefined ?? null;
      if (info === null) return false;
    }
    const stream = w[at + 1]! + w[at + 2]! * 4294967296;
    const kernel = this.#kernels[w[at + 3]!]!;
    try {
      const n = w[at + 7]!;
      const indirect = (word & LAUNCH_INDIRECT) !== 0;
      const buffers = this.#buffers[n] ?? this.#scratch(n);
      const p = at + LAUNCH_FIXED;
      const handles = this.handles;
      const plain = handles.plain;
      let count: Handle | BufferBinding | null = null;
      let next = p + n + (indirect ? 1 : 0);
      if ((word & HAS_VIEWS) === 0) {
        for (let i = 0; i < n; i++) buffers[i] = plain[w[p + i]!] ?? handles.binding(w[p + i]!, 0, 0, kernel);
        if (indirect) count = plain[w[p + n]!] ?? handles.binding(w[p + n]!, 0, 0, kernel);
      } else {
        const v = next;
        for (let i = 0; i < n; i++) buffers[i] = this.#viewAt(p + i, v + 4 * i, kernel);
        if (indirect) count = this.#viewAt(p + n, v + 4 * n, kernel);
        next = v + 4 * (n + (indirect ? 1 : 0));
      }
      if (info === null && ((word >>> 20) & 3) !== INFO_NONE) {
        const scratch = this.#info[infoWord] ??= new Uint32Array(infoWord);
        for (let i = 0; i < infoWord; i++) scratch[i] = w[next + i]!;
        info = scratch;
      }
      const mode = (word & LAUNCH_SKIP) !== 0 ? "skip" : "execute";
      // The main thread ran the launch door (`checkLaunch`) with the limits this server reported: skip it here.
      this.#path.launch(kernel, buffers, info, w[at + 4]!, w[at + 5]!, w[at + 6]!, count, mode, stream, true);
    } catch (e) {
      this.queue(stream, e);
    }
    return true;
  }

  /** A packed scratch array of `n` bindings (a holey one is slower to read on the launch path). */
  #scratch(n: number): (Handle | BufferBinding)[] {
    const a: (Handle | BufferBinding)[] = [];
    for (let i = 0; i < n; i++) a.push(undefined as unknown as Handle); // every entry is set before use
    return this.#buffers[n] = a;
  }

  /** The binding of the slot at `i` with its offsets at `v`. */
  #viewAt(i: number, v: number, kernel: Kernel): Handle | BufferBinding {
    const w = this.#words;
    return this.handles.binding(w[i]!, join(w[v]!, w[v + 1]!), join(w[v + 2]!, w[v + 3]!), kernel);
  }

  /**
   * Runs a write record.
   *
   * @param word The record's first word.
   * @param at Its index in the ring's words.
   * @returns False when its payload has not arrived; else the staging buffer
   * to hand back to the main thread, or null.
   */
  write(word: number, at: number): ArrayBuffer | null | false {
    const w = this.#words;
    const stream = join(w[at + 1]!, w[at + 2]!);
    let bytes: Uint8Array;
    let recycle: ArrayBuffer | null = null;
    if ((word & WRITE_INLINE) !== 0) {
      const length = w[at + 8]!;
      const words = new Uint32Array(Math.ceil(length / 4));
      for (let i = 0; i < words.length; i++) words[i] = w[at + WRITE_FIXED + i]!;
      bytes = new Uint8Array(words.buffer, 0, length);
    } else {
      const data = this.#take(w[at + 8]!) as WritePayload | undefined;
      if (data === undefined) return false;
      // Shared memory (one result delivered to several workers) is written from as it is: the upload copies it.
      bytes = new Uint8Array(data.buffer, data.offset, data.length);
      if (data.recycle) recycle = data.buffer as ArrayBuffer;
    }
    this.queued(stream, () => {
      const views = (word & HAS_VIEWS) !== 0;
      const start = views ? join(w[at + 4]!, w[at + 5]!) : 0;
      const end = views ? join(w[at + 6]!, w[at + 7]!) : 0;
      const binding = this.handles.binding(w[at + 3]!, start, end, "write");
      this.#server.write([[{ binding, shape: [bytes.byteLength], strides: [1], elemSize: 1 }, bytes]], stream);
    });
    return recycle;
  }

  /**
   * Runs a kernel record: makes the kernel the main thread defined, from its source.
   *
   * @param at The record's index in the ring's words.
   * @returns False when its payload has not arrived.
   */
  kernel(at: number): boolean {
    const data = this.#take(this.#words[at + 2]!) as KernelPayload | undefined;
    if (data === undefined) return false;
    this.queued(0, () => {
      const kernel = defineKernel(data);
      // The same source read by the same module: a different id would mean two runtimes across the threads.
      if (kernel.id !== data.id) {
        throw new ServerError(`kernel "${data.name}": id ${kernel.id} in the worker, ${data.id} on the main thread`);
      }
      this.#kernels[this.#words[at + 1]!] = kernel;
    });
    return true;
  }

  /**
   * Runs a record that only calls the server: allocation, release, graph,
   * dry-run, allocation mode, cleanup.
   *
   * @param op The operation.
   * @param at The record's index in the ring's words.
   */
  command(op: number, at: number): void {
    const w = this.#words;
    const server = this.#server;
    const stream = join(w[at + 1]!, w[at + 2]!);
    if (op === Op.free) return this.handles.free(w[at + 1]!);
    this.queued(op === Op.dryRun || op === Op.memoryCleanup || op === Op.graphDestroy ? 0 : stream, () => {
      switch (op) {
        case Op.alloc:
          return this.handles.alloc(w[at + 3]!, w[at + 6]!, join(w[at + 4]!, w[at + 5]!), stream);
        case Op.allocCount:
          return this.handles.alloc(w[at + 3]!, w[at + 6]!, join(w[at + 4]!, w[at + 5]!), stream, "count");
        case Op.replay:
          return server.replay(w[at + 3]!, stream);
        case Op.graphDestroy:
          return server.graphDestroy(w[at + 1]!, 0);
        case Op.graphPrepare:
          return server.graphPrepare(stream);
        case Op.graphAbort:
          return server.graphAbort(stream);
        case Op.dryRun:
          return server.dryRunDepth(w[at + 1]! === 1 ? 1 : -1);
        case Op.allocationMode:
          return server.allocationMode(w[at + 3]! === 1 ? "persistent" : "auto", stream);
        case Op.memoryCleanup:
          for (const id of server.streamIds()) server.memoryCleanup(id);
          return;
      }
    });
  }

  /**
   * Runs `fn`; what it throws is queued on `stream`.
   *
   * @param stream The record's stream.
   * @param fn The work.
   */
  queued(stream: StreamId, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.queue(stream, e);
    }
  }

  /**
   * Queues what a record threw on its stream (once the device is gone,
   * dropped: every call raises the loss).
   *
   * @param stream The record's stream.
   * @param e What it threw.
   */
  queue(stream: StreamId, e: unknown): void {
    if (this.#server.closed) return;
    const error = e instanceof ServerError ? e : new ServerError(`worker: ${(e as Error)?.message ?? e}`, { cause: e });
    try {
      this.#server.stream(stream).errors.push(error);
    } catch {
      // An unusable stream id was refused on the main thread; nothing to queue on.
    }
  }
}
