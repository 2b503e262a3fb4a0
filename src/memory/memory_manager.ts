/**
 * Routes reservations to pools and owns one stream's memory (CubeCL's
 * `MemoryManagement`).
 *
 * Routing (deterministic; tests depend on it):
 * 1. Count the reservation and run the periodic cleanup and, in pools that
 *    compact, a compaction step when one is due (neither while capturing).
 * 2. In persistent mode (or `size-match` with that size already present), reuse
 *    or allocate an exact-size slice in the persistent pool.
 * 3. Otherwise walk the dynamic pools in order. The first pool that accepts
 *    the size reuses a free slice, makes room by moving live slices (a pool
 *    that compacts and holds what it needs), or grows. A capped pool that is full spills
 *    to the next accepting pool; other errors are raised at once.
 * 4. No pool accepted: `IoError` `buffer-too-big`, or the remembered capacity error.
 *
 * Deliberate departures from CubeCL's contract:
 * - A size that no dynamic pool accepts (and that neither persistent mode nor
 *   `size-match` routes to the persistent pool) is refused before step 1: the
 *   refusal neither counts as a reservation nor runs the periodic cleanup, so
 *   it frees no idle page and does not shift the exclusive pools' sweep
 *   schedule. CubeCL counts and sweeps first (contract 3.2 step 1).
 * - `installPools` refuses with `pools-in-use` while any allocation is live in
 *   the dynamic pools, zero-byte ones included (the reported `bytesInUse` may
 *   then be 0); CubeCL refuses only when live bytes are above 0 (contract 3.7),
 *   which would drop the pages of live zero-byte allocations with the old pools.
 * - While a capture is armed, `installPools` still frees the old pools' free
 *   pages before replacing them (the explicit cleanup is a no-op then), so no
 *   page is left behind in a dropped pool.
 *
 * @module
 */

import { InstallMemoryPoolsError, IoError } from "../errors.ts";
import { DirectPool } from "./direct_pool.ts";
import { ExclusivePool } from "./exclusive_pool.ts";
import type { ManagedMemory, Slice } from "../contract/managed_memory.ts";
import type { MemoryPool } from "./memory_pool.ts";
import { combineUsage } from "./memory_usage.ts";
import { PersistentPool } from "./persistent_pool.ts";
import { SlicedPool } from "./sliced_pool.ts";
import type { ComputeStorage } from "../contract/storage.ts";
import type { MemoryReport, MemoryUsage, PersistentMemoryPolicy, PoolConfig } from "../contract/memory_types.ts";
import type { MemoryAllocationMode } from "../contract/memory_types.ts";
import { formatBytesExact } from "../_util/format.ts";
import type { SliceMover } from "./slice_mover.ts";

/** Options of a memory manager. */
export interface MemoryManagerOptions {
  /** Resolved pools in routing order. */
  pools: PoolConfig[];
  /** How persistent mode is honoured. @default "enabled" */
  persistentMemory?: PersistentMemoryPolicy;
  /** Prefix of GPU labels, e.g. `"stream 0 main"`. */
  label: string;
  /** Receives memory log lines (capacity spills); omitted means silent. */
  log?: (message: string) => void;
}

/** Builds the pool objects of a layout. */
function buildPools(storage: ComputeStorage, pools: PoolConfig[], label: string): MemoryPool[] {
  return pools.map((p, i) => {
    const l = `${label} pool ${i} ${p.kind}`;
    switch (p.kind) {
      case "sliced":
        return new SlicedPool(storage, {
          pageSize: p.pageSize,
          maxSliceSize: p.maxSliceSize ?? p.pageSize,
          ...(p.maxPoolSize === undefined ? {} : { maxPoolSize: p.maxPoolSize }),
          ...(p.fit === undefined ? {} : { fit: p.fit }),
          ...(p.deallocPeriod === undefined ? {} : { deallocPeriod: p.deallocPeriod }),
          ...(p.compaction === undefined ? {} : { compaction: p.compaction }),
        }, l);
      case "exclusive":
        return new ExclusivePool(storage, p, l);
      case "direct":
        return new DirectPool(storage, p, l);
    }
  });
}

interface CaptureMemory {
  restoreDepth: number;
  touched: Set<Slice>;
  primed: ManagedMemory[] | null;
}

/** One stream's pools, allocation mode and capture bookkeeping. */
export class MemoryManager {
  #storage: ComputeStorage;
  #pools: MemoryPool[];
  #persistent: PersistentPool;
  #policy: PersistentMemoryPolicy;
  #label: string;
  #log: ((message: string) => void) | undefined;
  #reservations = 0;
  #depth = 0;
  #warned = new Set<MemoryPool>();
  #capture: CaptureMemory | null = null;
  #mover: SliceMover | null = null;
  /** True when some dynamic pool compacts (and the mover is set). */
  #compacting = false;

  /**
   * Creates the instance.
   *
   * @param storage Where device buffers come from.
   * @param options Pools, persistence policy and labels.
   */
  constructor(storage: ComputeStorage, options: MemoryManagerOptions) {
    this.#storage = storage;
    this.#label = options.label;
    this.#log = options.log;
    this.#policy = options.persistentMemory ?? "enabled";
    this.#pools = buildPools(storage, options.pools, options.label);
    this.#persistent = new PersistentPool(storage, `${options.label} persistent`);
  }

  /** The storage behind the pools. */
  get storage(): ComputeStorage {
    return this.#storage;
  }

  /** The effective allocation mode. */
  get mode(): MemoryAllocationMode {
    return this.#persistentMode() ? "persistent" : "auto";
  }

  /** True while a graph prepare/capture window is armed. */
  get capturing(): boolean {
    return this.#capture !== null;
  }

  #persistentMode(): boolean {
    return this.#policy === "enforced" || this.#depth > 0 || this.#capture !== null;
  }

  /**
   * Reserves `size` bytes and returns a descriptor holding one caller
   * reference besides the pool's.
   *
   * @param size Requested bytes.
   * @param lazy Mint pages without device memory (dry run).
   * @returns The reserved descriptor.
   * @throws {IoError} `buffer-too-big`, `pool-capacity-exceeded` or `out-of-memory`.
   */
  reserve(size: number, lazy = false): ManagedMemory {
    const persistent = this.#persistentMode();
    // A size nothing can serve is refused before it counts or sweeps: a refused call changes nothing.
    if (!persistent && !this.#routable(size)) throw this.#tooBig(size);
    this.#reservations++;
    if (this.#capture === null) {
      this.#cleanup(false);
      if (this.#compacting && !lazy) { for (const pool of this.#pools) pool.compact?.(this.#mover!); }
    }
    if (persistent || this.#policy === "size-match") {
      let d = this.#persistent.tryReserve(size);
      if (d === null && (persistent || this.#persistent.hasSize(size))) {
        d = this.#persistent.alloc(size, lazy);
      }
      if (d !== null) return this.#touch(d);
    }
    let capacityError: IoError | null = null;
    for (const pool of this.#pools) {
      if (!pool.accept(size)) continue;
      const reused = pool.tryReserve(size);
      if (reused !== null) return reused;
      if (this.#compacting && !lazy && this.#capture === null && pool.reserveByMoving !== undefined) {
        const moved = pool.reserveByMoving(size, this.#mover!);
        if (moved !== null) return moved;
      }
      try {
        return pool.alloc(size, lazy);
      } catch (e) {
        if (!(e instanceof IoError && e.kind === "pool-capacity-exceeded")) throw capacityError ?? e;
        if (!this.#warned.has(pool)) {
          this.#warned.add(pool);
          this.#log?.(`${e.message}; spilling to the next pool`);
        }
        capacityError ??= e;
      }
    }
    throw capacityError ?? this.#tooBig(size);
  }

  /**
   * Sets what copies slices for pools that compact (the owning stream's
   * mover); without one (the default) nothing moves.
   *
   * @param mover The mover, or null.
   */
  setMover(mover: SliceMover | null): void {
    this.#mover = mover;
    this.#compacting = mover !== null && this.#pools.some((p) => p.compacts === true);
  }

  /** True when some dynamic pool accepts `size`, or `size-match` routes it to the persistent pool. */
  #routable(size: number): boolean {
    for (const pool of this.#pools) if (pool.accept(size)) return true;
    return this.#policy === "size-match" && this.#persistent.hasSize(size);
  }

  #tooBig(size: number): IoError {
    return new IoError(
      "buffer-too-big",
      `${this.#label}: no memory pool accepts ${formatBytesExact(size)}; the largest pool serves ${
        formatBytesExact(this.#largestAccepted())
      } (raise maxStorageBufferBindingSize or install a larger pool)`,
      { size },
    );
  }

  #largestAccepted(): number {
    let max = 0;
    for (const p of this.#pools) {
      const s = p.shape;
      if (s.kind === "sliced") max = Math.max(max, s.pageSize);
      else if (s.kind === "exclusive") max = Math.max(max, s.maxAllocSize);
      else return Infinity;
    }
    return max;
  }

  #touch(desc: ManagedMemory): ManagedMemory {
    const cap = this.#capture;
    if (cap !== null) {
      cap.touched.add(desc.slice!);
      if (cap.primed !== null) {
        desc.retain();
        cap.primed.push(desc);
      }
    }
    return desc;
  }

  /**
   * Moves a reserved slice to the user's descriptor: the user descriptor
   * gains the pool's share, and the reserved descriptor becomes stale.
   *
   * @param reserved A descriptor returned by `reserve` (its caller share is consumed).
   * @param user The user's uninitialised descriptor.
   */
  bind(reserved: ManagedMemory, user: ManagedMemory): void {
    const slice = reserved.slice!;
    slice.owner = user;
    user.slice = slice;
    user.refs++;
    user.handles++;
    reserved.slice = null;
    reserved.refs -= 2;
    reserved.handles -= 2;
    const primed = this.#capture?.primed;
    if (primed) {
      const i = primed.indexOf(reserved);
      if (i >= 0) {
        primed[i] = user;
        user.retain();
      }
    }
  }

  /**
   * Returns the slice a descriptor owns, giving a lazy page its memory.
   *
   * @param desc The descriptor.
   * @returns Its slice.
   * @throws {IoError} `not-found` when the descriptor was never initialised or
   * its location now belongs to another allocation.
   */
  resolve(desc: ManagedMemory): Slice {
    const slice = desc.slice;
    if (slice === null || slice.owner !== desc || desc.refs <= 1) {
      throw new IoError(
        "not-found",
        // Released first: once released, its slice may since have been merged or freed (and unlinked).
        desc.refs <= 1
          ? `${this.#label}: memory ${desc.id} was released`
          : slice === null
          ? `${this.#label}: memory ${desc.id} was never initialized or was superseded`
          : `${this.#label}: memory ${desc.id} points to a different allocation`,
      );
    }
    if (slice.page.storage.resource === null) this.#storage.materialize(slice.page.storage);
    return slice;
  }

  /**
   * Switches the allocation mode. Persistent windows nest: each `persistent`
   * opens one, each `auto` closes one. Ignored under the `disabled` and
   * `enforced` policies; deferred while a capture is armed.
   *
   * @param mode The mode to enter.
   */
  setMode(mode: MemoryAllocationMode): void {
    if (this.#policy === "disabled" || this.#policy === "enforced") return;
    const next = (depth: number) => mode === "persistent" ? depth + 1 : Math.max(0, depth - 1);
    if (this.#capture !== null) this.#capture.restoreDepth = next(this.#capture.restoreDepth);
    else this.#depth = next(this.#depth);
  }

  /** Usage of the dynamic pools and the persistent pool together. */
  usage(): MemoryUsage {
    return combineUsage(...this.#pools.map((p) => p.usage()), this.#persistent.usage());
  }

  /** Per-pool report in routing order, then the persistent pool. */
  report(): Omit<MemoryReport, "counts"> {
    return { dynamic: this.#pools.map((p) => p.report()), persistent: this.#persistent.report() };
  }

  /**
   * Frees what can be freed; a no-op while a capture is armed.
   *
   * @param explicit True for a user cleanup (frees every free page).
   */
  cleanup(explicit: boolean): void {
    if (this.#capture !== null) return;
    this.#cleanup(explicit);
  }

  #cleanup(explicit: boolean): void {
    this.#persistent.cleanup(this.#reservations, explicit);
    for (const p of this.#pools) p.cleanup(this.#reservations, explicit);
    if (explicit) this.#storage.flush();
  }

  /**
   * Rebuilds the dynamic pools with a new layout, only when nothing is live in
   * them. The persistent pool is never touched.
   *
   * @param pools Resolved pools in routing order.
   * @throws {InstallMemoryPoolsError} `pools-in-use` with the live byte count.
   */
  installPools(pools: PoolConfig[]): void {
    this.cleanup(true);
    const { numberAllocs: live, bytesInUse: inUse } = combineUsage(...this.#pools.map((p) => p.usage()));
    if (live > 0) {
      // Zero-byte allocations count too: their pages would be orphaned.
      throw new InstallMemoryPoolsError(
        "pools-in-use",
        `${this.#label}: cannot install new pools while ${live} allocation(s) (${
          formatBytesExact(inUse)
        }) are live in the current ones; release them and retry`,
        inUse,
      );
    }
    // Free the old pools' pages (all free now) before dropping the pools: the
    // cleanup above is skipped while a capture is armed, and a page left in a
    // dropped pool would never be destroyed.
    for (const p of this.#pools) p.cleanup(this.#reservations, true);
    this.#storage.flush();
    this.#pools = buildPools(this.#storage, pools, this.#label);
    this.#warned.clear();
    this.setMover(this.#mover);
  }

  /** Arms a capture: every reservation goes to the persistent pool and is remembered. */
  captureBegin(): void {
    if (this.#capture !== null) return;
    this.#capture = { restoreDepth: this.#depth, touched: new Set(), primed: [] };
  }

  /** Ends priming: the warm-up's retained slices become free for the recorded run. */
  capturePrimingEnd(): void {
    const c = this.#capture;
    if (c === null || c.primed === null) return;
    for (const d of c.primed) d.drop();
    c.primed = null;
  }

  /**
   * Disarms the capture and returns a retained reference to every slice
   * reserved inside the window; the graph holds them until it is destroyed.
   *
   * @returns Descriptors, each with one extra reference the caller must drop.
   */
  captureEnd(): ManagedMemory[] {
    const c = this.#disarm();
    if (c === null) return [];
    const retained: ManagedMemory[] = [];
    for (const s of c.touched) {
      s.owner.retain();
      retained.push(s.owner);
    }
    return retained;
  }

  /** Disarms a capture without retaining anything. */
  captureAbort(): void {
    this.#disarm();
  }

  /** Ends priming, drops the capture and restores the window depth; returns the capture it ended, if any. */
  #disarm(): CaptureMemory | null {
    const c = this.#capture;
    if (c === null) return null;
    this.capturePrimingEnd();
    this.#capture = null;
    this.#depth = c.restoreDepth;
    return c;
  }
}
