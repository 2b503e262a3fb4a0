/**
 * The all-reduces waiting for devices, across every communicator of a
 * directory: which devices joined which pending slot, and whom each slot
 * still waits for. A device that joined a slot waits for the devices missing
 * there. When those waits close a cycle through slots of different device
 * sets (A waits in an all-reduce over one set for B, while B waits in an
 * all-reduce over another set for A), the participants disagree on the call:
 * they named different sets, or called all-reduces of overlapping sets in
 * different orders. In CubeCL's order (each device runs its collectives one
 * after the other) none of them can ever complete, so the rendezvous reports
 * a `mismatch` at once instead of waiting for the timeout.
 *
 * Waits inside one set never form a cycle (each device joins its slots in
 * call order), and point-to-point copies are not part of the graph.
 *
 * @module
 */

import { CollectiveError } from "../errors.ts";

/** A pending all-reduce slot, as the graph sees it. */
export interface WaitingSlot {
  /** The key of its communicator's sorted set, e.g. `"cpu:0,cpu:1"`. */
  readonly set: string;
  /** Names of the devices it still waits for. */
  missing(): readonly string[];
  /**
   * Fails the slot for every participant that joined it, because of a cycle.
   *
   * @param error The mismatch.
   * @param taken The device of the cycle the slot waits for: its call went to another set.
   */
  refuse(error: CollectiveError, taken: string): void;
}

/** One wait of a cycle: `device` joined `slot` and waits there for `awaits`. */
export interface Wait {
  /** The waiting device. */
  readonly device: string;
  /** Where it waits. */
  readonly slot: WaitingSlot;
  /** The device it waits for (the next wait's device). */
  readonly awaits: string;
}

/** The pending all-reduce slots of a directory and the devices that joined them. */
export class WaitGraph {
  /** Pending slots by the name of each device that joined them. */
  #byDevice = new Map<string, Set<WaitingSlot>>();
  /** The devices that joined each pending slot. */
  #members = new Map<WaitingSlot, string[]>();

  /**
   * Records that `device` joined the pending `slot` (and waits there).
   *
   * @param slot The slot.
   * @param device The device's name.
   */
  join(slot: WaitingSlot, device: string): void {
    let members = this.#members.get(slot);
    if (members === undefined) this.#members.set(slot, members = []);
    members.push(device);
    let slots = this.#byDevice.get(device);
    if (slots === undefined) this.#byDevice.set(device, slots = new Set());
    slots.add(slot);
  }

  /**
   * Forgets a slot that runs or failed: nobody waits in it any more.
   *
   * @param slot The slot.
   */
  leave(slot: WaitingSlot): void {
    for (const device of this.#members.get(slot) ?? []) {
      const slots = this.#byDevice.get(device);
      slots?.delete(slot);
      if (slots?.size === 0) this.#byDevice.delete(device);
    }
    this.#members.delete(slot);
  }

  /**
   * The sets of the pending all-reduces `device` waits in, for messages.
   *
   * @param device The device's name.
   * @returns The sets' keys.
   */
  waitingIn(device: string): string[] {
    return [...this.#byDevice.get(device) ?? []].map((s) => s.set);
  }

  /**
   * The cycle of waits that `device` closed by joining `slot`, or null: a
   * chain that starts with its wait in `slot` and ends with a wait for it.
   *
   * @param slot The slot joined, still waiting.
   * @param device The device that joined it.
   * @returns The waits, in order, or null when there is no cycle.
   */
  cycle(slot: WaitingSlot, device: string): Wait[] | null {
    const reached = new Map<string, Wait>(); // device → the wait that reached it
    const queue: string[] = [];
    for (const awaits of slot.missing()) {
      reached.set(awaits, { device, slot, awaits });
      queue.push(awaits);
    }
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      for (const s of this.#byDevice.get(next) ?? []) {
        for (const awaits of s.missing()) {
          const wait = { device: next, slot: s, awaits };
          if (awaits === device) return chain(reached, wait, device);
          if (reached.has(awaits)) continue;
          reached.set(awaits, wait);
          queue.push(awaits);
        }
      }
    }
    return null;
  }
}

function chain(reached: ReadonlyMap<string, Wait>, last: Wait, start: string): Wait[] {
  const waits = [last];
  for (let w = reached.get(last.device)!;; w = reached.get(w.device)!) {
    waits.unshift(w);
    if (w.device === start) return waits;
  }
}

/**
 * The error every participant of a cycle's slots gets: it names each set.
 *
 * @param waits The cycle.
 * @returns A `mismatch` with no culprit.
 */
export function cycleError(waits: readonly Wait[]): CollectiveError {
  const steps = waits.map((w) => `${w.device} called allReduce over ${w.slot.set}, waiting for ${w.awaits}`);
  return new CollectiveError(
    "mismatch",
    `allReduce over different device sets: ${steps.join("; ")}. Every participant of an all-reduce must name ` +
      "the same devices, and every device must call the all-reduces of overlapping sets in the same order",
  );
}
