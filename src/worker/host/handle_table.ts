/**
 * The worker's table of the memory its client holds: one `Handle` per slot
 * (see `RemoteMemory`), standing for every main-thread reference to it, the
 * bindings of the views launches made of it, and each slot's memory id for
 * messages. A dense array, so the launch path finds a binding with one index.
 *
 * @module
 */

import { Handle } from "../../contract/handle.ts";
import type { Kernel } from "../../contract/kernel.ts";
import { ManagedMemory } from "../../contract/managed_memory.ts";
import type { BufferBinding, MemoryKind } from "../../contract/types.ts";
import { IoError } from "../../errors.ts";
import type { StreamId } from "../../ids.ts";
import type { WebGpuServer } from "../../server/webgpu_server.ts";

/** A slot's handle and the views of it bound so far. */
interface Held {
  readonly handle: Handle;
  /** Views by start offset, then end offset (numbers: no string key per launch). */
  views: Map<number, Map<number, BufferBinding>> | null;
}

/** The memory a worker holds for its client, by slot. */
export class HandleTable {
  /** Each slot's handle (undefined when free, or when its allocation failed): the launch path reads it. */
  plain: (Handle | undefined)[] = [];
  #held: (Held | undefined)[] = [];
  #ids: number[] = [];
  #server: WebGpuServer;

  /**
   * Creates the table of a server.
   *
   * @param server The worker's server.
   */
  constructor(server: WebGpuServer) {
    this.#server = server;
  }

  /**
   * Reserves memory for a slot; what the server throws is left to the caller
   * (the slot then holds nothing, and its bindings throw `not-found`).
   *
   * @param slot The slot.
   * @param id The main thread's memory id (messages name it).
   * @param size Bytes.
   * @param stream The stream whose pools serve it.
   * @param kind `count` for an indirect count (the count pool), else `storage`.
   */
  alloc(slot: number, id: number, size: number, stream: StreamId, kind: MemoryKind = "storage"): void {
    this.#ids[slot] = id;
    const memory = new ManagedMemory(1, 1);
    (memory as { id: number }).id = id; // messages name the id the main thread's handle shows
    this.#server.initializeMemory(memory, size, stream, kind);
    const handle = new Handle(this.#server, memory, stream, size);
    this.#held[slot] = { handle, views: null };
    this.plain[slot] = handle;
  }

  /**
   * Releases a slot's memory (queued work keeps it until done).
   *
   * @param slot The slot.
   */
  free(slot: number): void {
    const held = this.#held[slot];
    this.#held[slot] = this.plain[slot] = undefined;
    held?.handle.release();
  }

  /**
   * The binding of a slot and offsets.
   *
   * @param slot The slot.
   * @param offsetStart Bytes trimmed from the front.
   * @param offsetEnd Bytes trimmed from the back.
   * @param where The call's name, or the launch's kernel, for the error.
   * @returns The handle, or a view of it.
   * @throws {IoError} `not-found` for a slot whose allocation failed.
   */
  binding(slot: number, offsetStart: number, offsetEnd: number, where: string | Kernel): Handle | BufferBinding {
    const held = this.#held[slot];
    if (held === undefined) {
      const call = typeof where === "string" ? where : `launch(${where.name})`;
      const id = this.#ids[slot];
      throw new IoError("not-found", `${call}: memory ${id} holds nothing: its allocation failed (queued before)`);
    }
    if (offsetStart === 0 && offsetEnd === 0) return held.handle;
    const byEnd = (held.views ??= new Map()).get(offsetStart) ?? new Map<number, BufferBinding>();
    let view = byEnd.get(offsetEnd);
    if (view === undefined) {
      const h = held.handle;
      view = { memory: h.memory, stream: h.stream, size: h.size, offsetStart, offsetEnd };
      byEnd.set(offsetEnd, view);
      held.views.set(offsetStart, byEnd);
    }
    return view;
  }

  /** Releases every slot. */
  clear(): void {
    for (const held of this.#held) held?.handle.release();
    this.#held = [];
    this.plain = [];
  }
}
