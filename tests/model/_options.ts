/**
 * What a model run takes and gives: its options and statistics, the failure
 * it throws (with the seed and the last operations), the known-bug patterns
 * it can steer around, the client options it draws from the seed, and the
 * constants that bound its choices.
 */

import type { ClientOptions } from "../../mod.ts";
import type { MemoryConfiguration, PersistentMemoryPolicy } from "../../mod.ts";
import { TEST_FAST_READS } from "../_gpu.ts";

/** Options of one model run. */
export interface ModelOptions {
  /** Seed of the pseudo-random sequence. */
  seed: number;
  /** Operations to run. */
  steps: number;
  /** Operations listed when the run fails. @default 20 */
  history?: number;
  /** Prints every operation as it runs (debugging a replay). */
  verbose?: boolean;
  /**
   * Patterns of known runtime bugs to steer around, so a run can look for
   * other bugs until they are fixed (see `AVOIDABLE`).
   */
  avoid?: readonly string[];
  /** Client options; by default chosen from the seed. */
  config?: ClientOptions;
  /** Flushes every stream after every operation, to find the one that queued a device error (changes batching). */
  paranoid?: boolean;
}

/** What a run did. */
export interface ModelStats {
  /** Operations run. */
  steps: number;
  /** Count per operation kind. */
  ops: Record<string, number>;
  /** Bytes compared against the model. */
  bytesChecked: number;
  /** Milliseconds. */
  ms: number;
  /** Slices moved by pools that compact, over every stream, before the teardown. */
  moves?: number;
}

/** The failure of a model run: carries the seed and the operations that led to it. */
export class ModelFailure extends Error {
  /** The seed that reproduces it. */
  readonly seed: number;
  /** The step that failed (0-based). */
  readonly step: number;

  /**
   * Creates the failure.
   *
   * @param seed The seed.
   * @param step The failing step.
   * @param history The last operations, oldest first.
   * @param cause What went wrong.
   * @param config The client options of the run.
   */
  constructor(seed: number, step: number, history: readonly string[], cause: unknown, config?: ClientOptions) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `model run failed: seed ${seed}, step ${step}\n${why}\n` +
        `client options: ${JSON.stringify(config ?? {})}\n` +
        `replay: MODEL_SEED=${seed} deno test --allow-env --allow-read --allow-write tests/model/model_test.ts\n` +
        `last ${history.length} operations (oldest first):\n${history.map((h) => `  ${h}`).join("\n")}`,
      { cause },
    );
    this.name = "ModelFailure";
    this.seed = seed;
    this.step = step;
  }
}

/**
 * Patterns `avoid` accepts: each steers around a class of runtime bugs this
 * test found (each has a test in tests/regression/), so that a run on a tree
 * that still has one can look for others.
 */
export const AVOIDABLE: Readonly<Record<string, string>> = {
  // write_unaligned_view_clobbers_test.ts, write_view_in_last_word_clobbers_test.ts
  "view-write": "writes into a view whose length is not a multiple of 4 and that ends before its allocation does",
  // held_launch_info_overwritten_test.ts, held_write_invisible_to_other_stream_test.ts,
  // held_write_after_release_test.ts, held_indirect_count_overtaken_test.ts, held_launch_binding_destroyed_test.ts
  "held-write":
    "operations issued while a stream holds launches behind a kernel's first launch (a macrotask is awaited after it)",
  // read_after_release_test.ts, held_write_after_release_test.ts, indirect_count_after_release_test.ts
  "unpinned-cleanup":
    "memoryCleanup while a stream has unsubmitted work on another stream's memory it does not pin (every stream is flushed first)",
  // failed_launch_leaks_cross_stream_pin_test.ts
  "broken-cross": "kernels that fail to compile binding memory of another stream",
  // install_pools_orphans_zero_byte_allocation_test.ts
  "install-zero": "installMemoryPools while zero-byte allocations are live",
  // held_indirect_count_overtaken_test.ts
  "held-indirect": "indirect launches while a stream may hold work (a macrotask is awaited first)",
};

/**
 * Small best-fit pages that pack whenever they can (a negative slack: every
 * reservation empties a page whose slices fit in the others, and makes room
 * by moving before it makes a page): live memory moves often, and the handles, views,
 * clones, graphs, queued launches and reads in flight must follow (or, pinned,
 * keep it where it is).
 */
export const COMPACTING_LAYOUT: MemoryConfiguration = {
  pools: [
    { kind: "exclusive", maxAllocSize: 0 },
    {
      kind: "sliced",
      pageSize: 2048,
      maxSliceSize: 1024,
      fit: "best",
      deallocPeriod: 10,
      compaction: { slack: -1, every: 1, budget: 2048 },
    },
    { kind: "exclusive", maxAllocSize: 1 << 20, deallocPeriod: 10, sizeClasses: 4 },
  ],
};

/** Client options a run picks from its seed: batching, stream slots and memory layouts all vary. */
export function chooseConfig(pick: <T>(items: readonly T[]) => T): ClientOptions {
  const memory: MemoryConfiguration[] = [
    "compact",
    "subslices",
    "exclusive-pages",
    // Small best-fit pages given back after 10 idle reservations: the free-slice index and the sweep work hard.
    {
      pools: [
        { kind: "exclusive", maxAllocSize: 0 },
        { kind: "sliced", pageSize: 2048, maxSliceSize: 1024, fit: "best", deallocPeriod: 10 },
        { kind: "exclusive", maxAllocSize: 1 << 20, deallocPeriod: 10, sizeClasses: 4 },
      ],
    },
    // Small pages: many pages, so cleanups destroy buffers often.
    {
      pools: [
        { kind: "exclusive", maxAllocSize: 0 },
        { kind: "sliced", pageSize: 1024, maxSliceSize: 512, maxPoolSize: 4096 },
        { kind: "exclusive", maxAllocSize: 1 << 20, deallocPeriod: 10 },
      ],
    },
    { pools: [{ kind: "direct", reclaimAt: 4096 }] },
    COMPACTING_LAYOUT,
  ];
  return {
    ...(TEST_FAST_READS ? { fastReads: true } : {}),
    tasksMax: pick([512, 512, 64, 8, 3, 2, 1]),
    maxStreams: pick([128, 128, 2]),
    memory: pick(memory),
    persistentMemory: pick<PersistentMemoryPolicy>(["enabled", "enabled", "size-match", "enforced", "disabled"]),
    openPassAhead: pick([true, false]),
  };
}

/** Sizes, in u32 words, that allocations draw from. */
export const WORD_COUNTS = [1, 1, 2, 3, 4, 7, 8, 16, 31, 64, 65, 100, 128, 200, 256];
/** The streams a run switches between. */
export const STREAMS = [0, 1, 2];
/** Streams used now and then, beyond the three the run switches between. */
export const EXTRA_STREAMS = [5, 1000];
/** Live handles above which releases become more likely. */
export const MAX_LIVE = 48;
