/**
 * Which of a graph's indirect counts must be copied at each replay, and
 * where to. A count that shares a page with its launch's bindings is copied,
 * in the pass, into the graph's own indirect count buffer before its dispatch
 * reads it. A graph knows every binding of every dispatch it will encode, so
 * it gives each distinct count a slot of its own and copies it only where the
 * slot may be stale: at the count's first use in the replay, and after any
 * dispatch whose bindings cover the count's 12 bytes (it may have written
 * them, its own launch's count included). A replay of 200 launches from one
 * such count copies it once, not 200 times.
 *
 * @module
 */

/** What the plan needs of one recorded dispatch. */
export interface PlannedDispatch {
  /** Buffers of its storage bindings. */
  readonly buffers: readonly GPUBuffer[];
  /** Byte offsets of its bindings. */
  readonly offsets: readonly number[];
  /** Byte sizes of its bindings. */
  readonly sizes: readonly number[];
  /** Its indirect count: its buffer, byte offset, and whether it must be copied; or null. */
  readonly indirect: { readonly buffer: GPUBuffer; readonly offset: number; readonly copy: boolean } | null;
}

/** A dispatch's place in the plan: the slot its count is read from, and whether it copies the count first. */
export interface CountStep {
  /** The slot, in order of first use. */
  readonly slot: number;
  /** Whether the count is copied right before this dispatch. */
  readonly copy: boolean;
}

/**
 * Plans the count copies of a graph's dispatches.
 *
 * @param dispatches The dispatches, in order.
 * @returns The number of slots, and for each dispatch its step (null where
 * its count is not copied: a static count, or one read in place).
 */
export function planCountCopies(
  dispatches: readonly PlannedDispatch[],
): { slots: number; steps: (CountStep | null)[] } {
  const slotOf = new Map<GPUBuffer, Map<number, number>>();
  const counts: { buffer: GPUBuffer; at: number }[] = [];
  const fresh = new Set<number>(); // slots holding their count as it is now
  const steps = dispatches.map((d): CountStep | null => {
    let step: CountStep | null = null;
    const indirect = d.indirect;
    if (indirect !== null && indirect.copy) {
      let byOffset = slotOf.get(indirect.buffer);
      if (byOffset === undefined) slotOf.set(indirect.buffer, byOffset = new Map());
      let slot = byOffset.get(indirect.offset);
      if (slot === undefined) {
        byOffset.set(indirect.offset, slot = counts.length);
        counts.push({ buffer: indirect.buffer, at: indirect.offset });
      }
      step = { slot, copy: !fresh.has(slot) };
      fresh.add(slot);
    }
    // The dispatch may write whatever its bindings cover: a count there is stale from now on.
    for (const slot of fresh) {
      const { buffer, at } = counts[slot]!;
      for (let k = 0; k < d.buffers.length; k++) {
        const start = d.offsets[k]!;
        if (d.buffers[k] === buffer && start < at + 12 && at < start + d.sizes[k]!) {
          fresh.delete(slot);
          break;
        }
      }
    }
    return step;
  });
  return { slots: counts.length, steps };
}
