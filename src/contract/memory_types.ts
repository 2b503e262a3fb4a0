/**
 * Memory types of the contract (CubeCL's `MemoryUsage`, `MemoryReport`,
 * `MemoryConfiguration`, allocation modes and tensor layouts). The pools,
 * the memory manager and the layout policy implement them in `src/memory/`.
 *
 * @module
 */

/** How much device memory is held and used. */
export interface MemoryUsage {
  /** Live allocations. */
  numberAllocs: number;
  /** Requested bytes of live allocations. */
  bytesInUse: number;
  /** Alignment padding of live allocations, in bytes. */
  bytesPadding: number;
  /** Device bytes held, free or not. */
  bytesReserved: number;
}

/**
 * The effective shape of one pool, after alignment and shrinking, in the
 * names of {@linkcode PoolConfig}: `kind` says which pool, and each field is
 * the config's field of that name as the pool applies it (sizes in bytes,
 * rounded up to the device alignment; `maxSliceSize` filled in). A sliced,
 * exclusive or direct shape is itself a valid `PoolConfig`, so a report's
 * shapes can be installed again with `installMemoryPools({ pools })`.
 */
export type PoolShape =
  | {
    /** Many allocations carved out of large pages. */
    kind: "sliced";
    /** Bytes per page. */
    pageSize: number;
    /** Largest allocation carved from a page. */
    maxSliceSize: number;
    /** Cap on the bytes of all pages together. */
    maxPoolSize?: number;
    /** Where a reservation goes. */
    fit?: "first" | "best";
    /** Reservations a page may stay entirely free before it is given back. */
    deallocPeriod?: number;
    compaction?: { slack: number; budget: number; every: number };
  }
  | {
    /** One device buffer per allocation, reused by size. */
    kind: "exclusive";
    /** Largest allocation served. */
    maxAllocSize: number;
    /** Reservations per 5 idle sweeps. */
    deallocPeriod?: number;
    /** Size classes per doubling. */
    sizeClasses?: number;
  }
  | {
    /** One exact-size buffer per allocation, reused by identical size only. */
    kind: "direct";
    /** Watermark in bytes above which free buffers are released. */
    reclaimAt?: number;
  }
  | {
    /** The persistent pool: exact-size reuse, for weights and graph working sets (not configurable). */
    kind: "persistent";
  };

/** The state of one pool. */
export interface MemoryPoolReport {
  /** The pool's kind and effective shape, named as in its {@linkcode PoolConfig}. */
  shape: PoolShape;
  /** The pool's usage. */
  usage: MemoryUsage;
  /** Pages (device buffers) held now. */
  pages: number;
  /** Highest number of pages held at once since the pool was built. */
  pagesPeak: number;
  /** Pages carved under a dry run and not yet backed by device memory. */
  pagesUnmapped: number;
  /** Largest requested size ever served, in bytes. */
  largestAlloc: number;
  /**
   * What compaction did since the pool was built (sliced pools that
   * compact): live slices moved to other pages, the bytes those moves
   * copied, and pages given back after their slices moved out (or once they
   * stood empty beyond the pool's need).
   */
  compaction?: { moves: number; bytesMoved: number; pagesGivenBack: number };
}

/** The main pools of one stream: dynamic pools in routing order, then the persistent pool. */
export interface MemoryReport {
  /** Dynamic pools, in routing order. */
  dynamic: MemoryPoolReport[];
  /** The persistent pool (weights and graph working sets). */
  persistent: MemoryPoolReport;
  /** The pool of indirect counts made with `createCount`/`emptyCount` (pages that hold counts only). */
  counts: MemoryPoolReport;
}

/** One pool of a custom layout. Sizes are in bytes and are rounded up to the device alignment. */
export type PoolConfig =
  | {
    /** One device buffer per allocation, reused by size. */
    kind: "exclusive";
    /** Largest allocation served, at most the device's `maxBufferSize`; 0 makes a pool for zero-byte allocations. */
    maxAllocSize: number;
    /** Reservations per 5 idle sweeps; omitted means idle pages are kept until cleanup. */
    deallocPeriod?: number;
    /**
     * Size classes per doubling: each page is sized to the class of its first
     * request (at most 2^(1/n) larger) and reused only by requests of that
     * class or the one below. Omitted: CubeCL's moving-average page size, and
     * reuse by any smaller request.
     */
    sizeClasses?: number;
  }
  | {
    /** Many allocations carved out of large pages. */
    kind: "sliced";
    /** Bytes per page. */
    pageSize: number;
    /** Largest allocation carved from a page. @default pageSize */
    maxSliceSize?: number;
    /** Cap on the bytes of all pages together; a full capped pool spills to the next pool. */
    maxPoolSize?: number;
    /**
     * Where a reservation goes: `first` is CubeCL's first free slice that
     * fits, over pages in creation order; `best` the smallest free slice that
     * fits, over every page (fewer unusable holes when sizes are mixed). A
     * `first` pool without a cap also takes "near-page" sizes above
     * `maxSliceSize` that waste under a fifth of a page (CubeCL's rule); a
     * `best` pool takes only sizes up to `maxSliceSize`.
     * @default "first"
     */
    fit?: "first" | "best";
    /**
     * Reservations a page may stay entirely free before it is given back
     * (checked every fifth of the period); omitted keeps pages until an
     * explicit cleanup, as CubeCL does. A pool that keeps making pages soon
     * after giving some back (a loop whose quiet phase outlasts the period)
     * doubles its wait, up to 32 times the period.
     */
    deallocPeriod?: number;
    /**
     * Moves live memory out of sparse pages into fuller ones, so that the
     * pool holds little more than its live bytes (`fit: "best"` only; `true`
     * takes every default).
     *
     * Handles are indirect, so memory that nothing pins (a graph,
     * `getResource`, a read, or a launch of another stream, in flight) can be
     * copied to another page, in the order of the stream that owns it, and
     * its handles, views and later launches follow. A pool that holds more
     * than it needed lately (its live bytes and `slack`, over a window of
     * `deallocPeriod` reservations, or 1,000, that doubles while a loop
     * keeps taking back what it gave) empties its sparsest pages into the
     * others and gives them back; a reservation that no free slice holds, in
     * a pool that holds what it needs, moves a few slices to make room
     * instead of making a page. Moves happen in reservations, never in a
     * launch or a read, at most `budget` bytes at a time, in a submit of
     * their own after the stream's queued work.
     *
     * - `slack`: free bytes the pool may hold beyond its live bytes (and one
     *   page), as a fraction of them; below 0 (down to -1) the pool packs
     *   whenever it can, whatever it costs in moves and buffers (for tests).
     *   @default 0.03
     * - `budget`: most bytes one step, or one reservation, copies. @default half a page
     * - `every`: reservations between two compaction steps, at least. @default 16
     *
     * @default false
     */
    compaction?: boolean | { slack?: number; budget?: number; every?: number };
  }
  | {
    /** One exact-size buffer per allocation, reused by identical size only. */
    kind: "direct";
    /** Watermark in bytes above which free buffers are released (after each new buffer is made); 0 keeps none. */
    reclaimAt?: number;
  };

/**
 * A memory layout: a preset or an explicit, ordered pool list.
 *
 * - `"compact"` (the default): a zero-byte pool, sliced pools with fixed
 *   pages of 1, 2 and 16 MiB (best fit, compacting; pages that stay free are
 *   given back), and an exclusive tail with size classes up to the largest page.
 * - `"subslices"`: CubeCL's native ladder, with page sizes derived from
 *   `maxStorageBufferBindingSize`, and an exclusive tail.
 * - `"exclusive-pages"`: 24 exclusive buckets from 32 KiB to the largest page.
 * - `{ pools }`: your own pools, in routing order (the first pool that
 *   accepts a size serves it).
 */
export type MemoryConfiguration = "compact" | "subslices" | "exclusive-pages" | { pools: PoolConfig[] };

/**
 * How persistent allocation mode is honoured (CubeCL's `persistent_memory`):
 * `enabled` honours mode switches; `size-match` also routes automatic
 * allocations to the persistent pool when that exact size already lives there;
 * `disabled` ignores switches; `enforced` is always persistent.
 */
export type PersistentMemoryPolicy = "enabled" | "size-match" | "disabled" | "enforced";

/** Where new allocations go: the dynamic pools, or the persistent pool. */
export type MemoryAllocationMode = "auto" | "persistent";

/** `contiguous` is row-major; `optimized` lets a policy pad rows (contiguous on WebGPU). */
export type LayoutStrategy = "contiguous" | "optimized";

/** The shape of one tensor to lay out. */
export interface MemoryLayoutDescriptor {
  /** Extent of each dimension, in elements. */
  readonly shape: readonly number[];
  /** Bytes per element. */
  readonly elemSize: number;
  /** Layout strategy. @default "contiguous" */
  readonly strategy?: LayoutStrategy;
}

/** Where one tensor lives inside a group's reservation. */
export interface TensorPlacement {
  /** Bytes before the tensor. */
  readonly offsetStart: number;
  /** Bytes after the tensor. */
  readonly offsetEnd: number;
  /** Stride of each dimension, in elements. */
  readonly strides: readonly number[];
  /** Bytes of the tensor: `product(shape) × elemSize`. */
  readonly size: number;
}

/** A group's reservation size and the placement of each tensor. */
export interface LayoutPlan {
  /** Bytes to reserve for the whole group. */
  readonly size: number;
  /** One placement per descriptor, in order. */
  readonly placements: readonly TensorPlacement[];
}

/** Decides the layout of new tensors. Pure and synchronous: it runs on the client. */
export interface MemoryLayoutPolicy {
  /**
   * Lays out a group of tensors in one reservation.
   *
   * @param descriptors The tensors.
   * @returns The reservation size and each tensor's placement.
   */
  plan(descriptors: readonly MemoryLayoutDescriptor[]): LayoutPlan;
}
