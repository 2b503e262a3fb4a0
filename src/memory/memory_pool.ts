/**
 * The contract every memory pool implements (CubeCL's `MemoryPool`).
 *
 * A memory manager walks its pools in routing order. For each pool that
 * `accept`s a size it first tries `tryReserve` (reuse a free slice), then
 * `alloc` (grow the pool). Pools decide reuse from reference counts alone
 * (`Slice.isFree()`); they are never told when a handle is released.
 *
 * @module
 */

import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { MemoryPoolReport, MemoryUsage, PoolShape } from "../contract/memory_types.ts";
import type { SliceMover } from "./slice_mover.ts";

/** A pool of device memory. */
export interface MemoryPool {
  /** The effective shape after alignment and shrinking. */
  readonly shape: PoolShape;
  /** Number of pages (device buffers) held now. */
  readonly pageCount: number;
  /** True when this pool may serve `size` bytes. */
  accept(size: number): boolean;
  /**
   * Reuses a free slice for `size` bytes, returning a descriptor that holds
   * one caller reference besides the pool's, or `null` when none fits.
   */
  tryReserve(size: number): ManagedMemory | null;
  /**
   * Grows the pool and reserves `size` bytes from the new space. With `lazy`,
   * new pages get no device memory until first resolved (dry run).
   * Throws `IoError` (`pool-capacity-exceeded`, `buffer-too-big`).
   */
  alloc(size: number, lazy: boolean): ManagedMemory;
  /** Current usage. */
  usage(): MemoryUsage;
  /** Usage plus shape and high-water marks. */
  report(): MemoryPoolReport;
  /**
   * Frees what can be freed. A periodic cleanup (`explicit` false) runs on
   * every reservation and after every submit of the stream, with the manager's
   * reservation counter; an explicit one frees every fully free page.
   */
  cleanup(reservations: number, explicit: boolean): void;
  /** True when the pool moves live slices to pack its pages (`compact`, `reserveByMoving`). */
  readonly compacts?: boolean;
  /**
   * Runs a compaction step when one is due: moves live slices out of the
   * sparsest pages of a pool that holds more than it needs, and gives those
   * pages back.
   */
  compact?(mover: SliceMover): void;
  /**
   * Reserves `size` bytes that no free slice holds by moving live slices,
   * instead of growing; null when the pool should grow.
   */
  reserveByMoving?(size: number, mover: SliceMover): ManagedMemory | null;
}
