/**
 * What a compacting pool needs of the stream that owns its memory: a way to
 * copy a live slice's bytes to another slice in stream order. The pools
 * decide what moves where; the stream (`src/stream/`) encodes the copies.
 *
 * Handles are indirect (a `Handle` holds a `ManagedMemory`, whose `slice`
 * may change), so a pool can move live memory that nothing pins: a move
 * reserves the destination, copies the bytes after every queued use of the
 * source, points the descriptor at the destination and frees the source.
 *
 * @module
 */

import type { Page, Slice } from "../contract/managed_memory.ts";

/** Copies slices for a compacting pool, in the owning stream's order. */
export interface SliceMover {
  /**
   * Readies a compaction step: returns false when no move may be made now
   * (held work, a capture, a lost device), else hands the stream's queued
   * work to the device so that the copies come after it.
   *
   * @returns True when moves may follow.
   */
  begin(): boolean;
  /**
   * True when a move may read or write `page` without submitting another
   * stream first (no other stream holds unsubmitted work on it).
   *
   * @param page A page of the pool.
   * @returns Whether the page may take part in a move now.
   */
  canUse(page: Page): boolean;
  /**
   * Queues the copy of a slice's bytes to a slice of another page.
   *
   * @param from The live slice.
   * @param to Its new place, as large.
   * @param bytes Bytes to copy (the slice's size, rounded up to 4).
   */
  copy(from: Slice, to: Slice, bytes: number): void;
  /** Submits the copies queued since `begin`, on their own. */
  end(): void;
}

/** True when `slice` is live and only its pool and user handles hold it (nothing pins it). */
export function movable(slice: Slice): boolean {
  const owner = slice.owner;
  return owner.refs > 1 && owner.refs === owner.handles && owner.slice === slice && !owner.count;
}
