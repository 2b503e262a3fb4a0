/**
 * A channel of a communicator as plain data: its participants, how many
 * calls each has made (the slot its next call joins), its slots and who
 * joined them, and the calls held while a participant owes a failed slot.
 * The rendezvous (`collective_group.ts`) decides what happens; these are the
 * facts it decides on.
 *
 * @module
 */

import type { CollectiveError } from "../errors.ts";
import type { DeviceId } from "../contract/types.ts";
import type { CollectivePart, JoinRequest, ReduceSite } from "./collective_parts.ts";
import type { WaitingSlot } from "./wait_graph.ts";

/** A participant's call, before it joins a slot. */
export interface Call {
  /** What it asks. */
  readonly request: JoinRequest;
  /** Settles the call successfully. */
  readonly resolve: () => void;
  /** Fails the call. */
  readonly reject: (e: CollectiveError) => void;
}

/** A call that joined a slot. */
export interface Joined extends Call {
  /** Its part, once made (null before, or when making it failed). */
  part: CollectivePart | null;
  /** Its timeout while others are missing. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Its abort listener while others are missing. */
  onAbort: (() => void) | null;
}

/** One slot of a channel: the `index`-th call of every participant. */
export interface Slot {
  /** Its place in the channel. */
  readonly index: number;
  /** What every call must agree on (its first call's). */
  readonly signature: string;
  /** Its first call, for messages. */
  readonly what: string;
  /** Where an all-reduce reduces, fixed by its first participant (`host` for copies). */
  readonly site: ReduceSite;
  /** Bytes per participant of an all-reduce (0 for copies). */
  readonly bytes: number;
  /** By position: the call that joined; null when the position was settled without one; undefined while missing. */
  readonly joined: (Joined | null | undefined)[];
  /** Positions joined or settled. */
  count: number;
  /** Why it failed, or null. */
  failed: CollectiveError | null;
  /** True once it runs. */
  started: boolean;
  /** The slot in the wait graph while an all-reduce waits, else null. */
  waiting: WaitingSlot | null;
}

/** One channel of a communicator: the all-reduces, or one direction of copies. */
export interface Channel {
  /** True for the all-reduce channel (its waits are in the wait graph). */
  readonly reduces: boolean;
  /** The participants' devices, by position. */
  readonly devices: readonly DeviceId[];
  /** Calls made by each position so far: the next call joins slot `counters[position]`. */
  readonly counters: number[];
  /** The slots not yet forgotten: waiting, or failed with positions still to settle. */
  readonly slots: Map<number, Slot>;
  /** By position: calls held until the end of the turn while it owes a failed slot, else null. */
  readonly held: (Call[] | null)[];
}

/**
 * A channel with no call yet.
 *
 * @param reduces True for the all-reduce channel.
 * @param devices The participants, by position.
 * @returns The channel.
 */
export function newChannel(reduces: boolean, devices: readonly DeviceId[]): Channel {
  return { reduces, devices, counters: devices.map(() => 0), slots: new Map(), held: devices.map(() => null) };
}

/**
 * True when slot `index` failed while `position` was missing from it: the
 * position owes it a call.
 *
 * @param channel The channel.
 * @param position The participant.
 * @param index The slot.
 * @returns Whether it owes the slot.
 */
export function owes(channel: Channel, position: number, index: number): boolean {
  const slot = channel.slots.get(index);
  return slot !== undefined && slot.failed !== null && slot.joined[position] === undefined;
}

/**
 * The first slot after the failed ones `position` owes from its counter on,
 * when another participant has called it already; else null.
 *
 * @param channel The channel.
 * @param position The participant.
 * @returns The slot's index, or null.
 */
export function nextCalled(channel: Channel, position: number): number | null {
  let index = channel.counters[position]!;
  while (owes(channel, position, index)) index++;
  return channel.slots.has(index) ? index : null;
}

/**
 * Settles `position`'s place in `slot` without a call of its own: the slot
 * counts it, the position's counter moves past the slot, and a failed slot
 * every position has settled is forgotten.
 *
 * @param channel The channel.
 * @param slot The slot (the one the position's counter points at).
 * @param position The participant.
 */
export function settle(channel: Channel, slot: Slot, position: number): void {
  slot.joined[position] = null;
  slot.count++;
  channel.counters[position] = slot.index + 1;
  if (slot.failed !== null && slot.count === channel.devices.length) channel.slots.delete(slot.index);
}
