/**
 * Identifiers shared across the runtime.
 *
 * @module
 */

import { describe } from "./_util/describe.ts";

/**
 * A logical, ordered lane of work (CubeCL's `StreamId`). Any non-negative
 * safe integer is valid; it maps onto a stream slot as `id % maxStreams`, so two
 * ids may share a slot, which is safe because a slot is FIFO.
 */
export type StreamId = number;

/** A process-unique id naming a captured graph held by a server. */
export type GraphId = number;

/**
 * A token naming one open profile (CubeCL's `ProfilingToken`). Tokens may nest
 * or overlap; each is ended exactly once with `endProfile`.
 */
export interface ProfilingToken {
  /** Process-unique id of the token. */
  readonly id: number;
  /** The stream the profile was started on. */
  readonly stream: StreamId;
}

let nextGraphId = 1;
let nextTokenId = 1;
let nextMemoryId = 1;
let nextStorageId = 1;

/** Returns a fresh, process-unique graph id. */
export function allocateGraphId(): GraphId {
  return nextGraphId++;
}

/** Returns a fresh, process-unique profiling token id. */
export function allocateTokenId(): number {
  return nextTokenId++;
}

/** Returns a fresh, process-unique memory descriptor id. */
export function allocateMemoryId(): number {
  return nextMemoryId++;
}

/** Returns a fresh, process-unique device buffer id (unique across storages). */
export function allocateStorageId(): number {
  return nextStorageId++;
}

/** Checks that `id` is a valid stream id, throwing a `RangeError` naming it otherwise. */
export function checkStreamId(id: unknown, where: string): asserts id is StreamId {
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
    throw new RangeError(`${where}: stream id must be a non-negative safe integer, got ${describe(id)}`);
  }
}
