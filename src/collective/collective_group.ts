/**
 * The rendezvous of a communicator (CubeCL's communicator of a sorted device
 * set, keyed by its `CommunicationId`): the `n`-th call of each participant
 * on a channel joins slot `n` of that channel; the slot runs once every
 * participant has joined. All-reduces use one channel whose participants are
 * the set's devices in rank order; each direction of a point-to-point copy
 * is its own channel (the `n`-th send from A to B meets the `n`-th receive on
 * B from A).
 *
 * A slot fails for every participant that joined it when they disagree on
 * the call (`mismatch`, also when all-reduces over different sets wait for
 * each other: see `wait_graph.ts`), when one does not join within its
 * timeout (`timeout`) or aborts its wait (`aborted`), when a participant's
 * device goes away (`device-lost`), or when a part fails before the result
 * exists.
 *
 * A participant missing from a failed slot owes it a call. Its next call on
 * the channel settles the debt, decided at the end of the event-loop turn in
 * which it calls (so that the other devices' calls of that turn are seen):
 * when another participant has called the next slot by then, the missing
 * one is taken to have skipped the failed slot and joins that one; when none
 * has, the call is its late call for the failed slot and fails at once with
 * the slot's reason, and its next call joins the next slot. Either way the
 * participants' slot counters line up again, and later calls run.
 *
 * @module
 */

import { CollectiveError } from "../errors.ts";
import type { DeviceId } from "../contract/types.ts";
import type { JoinRequest } from "./collective_parts.ts";
import {
  type Call,
  type Channel,
  type Joined,
  newChannel,
  nextCalled,
  owes,
  settle,
  type Slot,
} from "./channel_state.ts";
import { participantFailure, quietSource, type RunEntry, runSlot } from "./collective_runs.ts";
import { deviceName } from "./device_ids.ts";
import { SitePicker } from "./site_picker.ts";
import { cycleError, WaitGraph } from "./wait_graph.ts";

/** The communicator of one sorted device set. */
export class CollectiveGroup {
  /** The key of the sorted set, e.g. `"cpu:0,cpu:1"`. */
  readonly key: string;
  /** The devices, sorted: a device's rank is its position. */
  readonly devices: readonly DeviceId[];
  /** Where `auto` all-reduces reduce, from what this communicator measured. */
  readonly sites: SitePicker = new SitePicker();
  #channels = new Map<string, Channel>();
  #closed: CollectiveError | null = null;
  /** True when a member reduces on the host only: every all-reduce of the group reduces on the host. */
  #hostOnly: boolean;
  #waits: WaitGraph;

  /**
   * Creates the communicator.
   *
   * @param key The key of the sorted set.
   * @param devices The devices, sorted.
   * @param options `hostOnly`: a member reduces on the host only (a worker
   * client's device); `waits`: the wait graph shared by every communicator of
   * the directory (a graph of its own by default).
   */
  constructor(key: string, devices: readonly DeviceId[], options: { hostOnly?: boolean; waits?: WaitGraph } = {}) {
    this.key = key;
    this.devices = devices;
    this.#hostOnly = options.hostOnly ?? false;
    this.#waits = options.waits ?? new WaitGraph();
  }

  /**
   * The rank of a device in the set, or -1.
   *
   * @param id The device.
   * @returns Its position in the sorted set.
   */
  rank(id: DeviceId): number {
    return this.devices.findIndex((d) => d.typeId === id.typeId && d.indexId === id.indexId);
  }

  /**
   * Joins the next all-reduce slot of rank `rank`.
   *
   * @param rank The caller's rank.
   * @param request The call.
   * @returns Settles when the caller's part is done; rejects with `CollectiveError`.
   */
  joinAllReduce(rank: number, request: JoinRequest): Promise<void> {
    return this.#join("all-reduce", this.devices, rank, request);
  }

  /**
   * Joins the next slot of the copy from rank `from` to rank `to`, as the
   * sender (`side` 0) or the receiver (`side` 1).
   *
   * @param from The sender's rank.
   * @param to The receiver's rank.
   * @param side 0 for the sender, 1 for the receiver.
   * @param request The call.
   * @returns Settles when the copy is done; rejects with `CollectiveError`.
   */
  joinCopy(from: number, to: number, side: 0 | 1, request: JoinRequest): Promise<void> {
    const a = this.devices[from]!;
    const b = this.devices[to]!;
    return this.#join(`copy ${deviceName(a)}>${deviceName(b)}`, [a, b], side, request);
  }

  /**
   * Fails every slot that has not started with `device-lost` naming the
   * device that went away, and refuses later calls (the directory drops the
   * group; a new one is made for the same set if its devices are open again).
   *
   * @param gone The device closed or lost.
   * @param cause The device's loss.
   */
  close(gone: DeviceId, cause: unknown): void {
    const name = deviceName(gone);
    const closed = this.#closed ??= new CollectiveError(
      "device-lost",
      `collective of ${this.key}: device ${name} was closed or lost; open the devices again and retry`,
      { culprit: name, cause },
    );
    for (const channel of this.#channels.values()) {
      channel.held.forEach((calls, position) => {
        channel.held[position] = null;
        for (const call of calls ?? []) call.reject(closed);
      });
      for (const slot of channel.slots.values()) {
        if (slot.started || slot.failed !== null) continue;
        const message = `${slot.what}: device ${name} was closed or lost before every participant joined`;
        this.#fail(channel, slot, new CollectiveError("device-lost", message, { culprit: name, cause }));
      }
    }
  }

  #join(key: string, devices: readonly DeviceId[], position: number, request: JoinRequest): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    if (this.#closed !== null) {
      reject(this.#closed);
      return promise;
    }
    let channel = this.#channels.get(key);
    if (channel === undefined) {
      channel = newChannel(key === "all-reduce", devices);
      this.#channels.set(key, channel);
    }
    this.#call(channel, position, { request, resolve, reject });
    return promise;
  }

  /** A position's call: joins its next slot, unless it owes a failed slot (then see the module's notes). */
  #call(channel: Channel, position: number, call: Call): void {
    const held = channel.held[position] ?? null;
    if (held !== null) {
      held.push(call); // behind the calls held before it, in call order
      return;
    }
    const index = channel.counters[position]!;
    if (owes(channel, position, index)) {
      const next = nextCalled(channel, position);
      if (next === null) {
        channel.held[position] = [call];
        setTimeout(() => this.#settleDebt(channel, position), 0);
        return;
      }
      for (let i = index; i < next; i++) settle(channel, channel.slots.get(i)!, position);
    }
    this.#enter(channel, position, call);
  }

  /** End of the turn for a position that owes a failed slot: it skipped it, or its first held call is late. */
  #settleDebt(channel: Channel, position: number): void {
    const calls = channel.held[position] ?? null;
    if (calls === null) return; // the group closed meanwhile
    channel.held[position] = null;
    const index = channel.counters[position]!;
    if (owes(channel, position, index) && nextCalled(channel, position) === null) {
      const slot = channel.slots.get(index)!;
      const late = calls.shift()!;
      settle(channel, slot, position);
      const name = deviceName(channel.devices[position]!);
      const failed = slot.failed!;
      late.reject(
        new CollectiveError(
          failed.reason,
          `${late.request.what}: ${name} called after slot ${index} of ${this.key} had failed without it ` +
            `(${failed.message}); this call is refused as ${name}'s late call for that slot, and its next call ` +
            "joins the next slot",
          { culprit: failed.culprit, cause: failed },
        ),
      );
    }
    for (const call of calls) this.#call(channel, position, call);
  }

  #enter(channel: Channel, position: number, call: Call): void {
    const { request } = call;
    const devices = channel.devices;
    const index = channel.counters[position]!++;
    let slot = channel.slots.get(index);
    if (slot === undefined) {
      slot = {
        index,
        signature: request.signature,
        what: request.what,
        site: request.site === undefined || this.#hostOnly ? "host" : this.sites.pick(request.site, devices.length),
        bytes: request.site?.bytes ?? 0,
        joined: devices.map(() => undefined),
        count: 0,
        failed: null,
        started: false,
        waiting: null,
      };
      channel.slots.set(index, slot);
    }
    const joined: Joined = { ...call, part: null, timer: undefined, onAbort: null };
    slot.joined[position] = joined;
    slot.count++;
    const name = deviceName(devices[position]!);
    if (request.signature !== slot.signature) {
      const first = slot.joined.findIndex((j) => j && j !== joined);
      this.#fail(
        channel,
        slot,
        new CollectiveError(
          "mismatch",
          `collective slot ${index} of ${this.key}: ${name} called ${request.what} but ${
            deviceName(devices[first]!)
          } called ${slot.what}; every participant must make the same calls in the same order`,
        ),
      );
    } else if (request.signal?.aborted) {
      this.#fail(channel, slot, this.#aborted(slot, name, request.signal));
    } else if (!this.#closesCycle(channel, slot, name)) {
      try {
        joined.part = quietSource(request.begin(slot.site)); // read at the join, awaited once the slot runs
      } catch (cause) {
        this.#fail(channel, slot, participantFailure(request.what, name, cause));
      }
      if (slot.failed === null && slot.count < devices.length) this.#arm(channel, slot, joined, name);
    }
    if (slot.count === devices.length) this.#complete(channel, slot);
  }

  /**
   * Records an all-reduce participant that waits for others in the wait
   * graph; when its wait closes a cycle through other sets, fails every slot
   * of the cycle with one `mismatch` and returns true.
   */
  #closesCycle(channel: Channel, slot: Slot, name: string): boolean {
    if (!channel.reduces || slot.count === channel.devices.length) return false;
    slot.waiting ??= {
      set: this.key,
      missing: () => channel.devices.filter((_, i) => slot.joined[i] === undefined).map(deviceName),
      refuse: (error, taken) => {
        // The device the slot waits for called another set instead: that call was its call for this slot.
        const position = channel.devices.findIndex((d) => deviceName(d) === taken);
        if (channel.counters[position] === slot.index && channel.held[position] === null) {
          settle(channel, slot, position);
        }
        this.#fail(channel, slot, error);
      },
    };
    this.#waits.join(slot.waiting, name);
    const cycle = this.#waits.cycle(slot.waiting, name);
    if (cycle === null) return false;
    const error = cycleError(cycle);
    for (const wait of cycle) wait.slot.refuse(error, wait.awaits);
    return true;
  }

  /** Starts the participant's timeout and abort listener while others are missing. */
  #arm(channel: Channel, slot: Slot, joined: Joined, name: string): void {
    const { timeoutMs, signal } = joined.request;
    joined.timer = setTimeout(() => {
      const missing = channel.devices.filter((_, i) => slot.joined[i] === undefined).map(deviceName);
      const elsewhere = missing.flatMap((m) =>
        this.#waits.waitingIn(m).map((set) => `${m} waits in allReduce over ${set}`)
      );
      this.#fail(
        channel,
        slot,
        new CollectiveError(
          "timeout",
          `${slot.what}: ${
            missing.join(", ")
          } did not join within ${timeoutMs} ms (slot ${slot.index} of ${this.key}, waited for by ${name})${
            elsewhere.length === 0 ? "" : `; meanwhile ${elsewhere.join(", ")}`
          }`,
          { culprit: missing[0] ?? null },
        ),
      );
    }, timeoutMs);
    if (signal !== undefined) {
      joined.onAbort = () => this.#fail(channel, slot, this.#aborted(slot, name, signal));
      signal.addEventListener("abort", joined.onAbort, { once: true });
    }
  }

  #aborted(slot: Slot, name: string, signal: AbortSignal): CollectiveError {
    return new CollectiveError(
      "aborted",
      `${slot.what}: ${name} aborted its wait (slot ${slot.index} of ${this.key})`,
      {
        culprit: name,
        cause: signal.reason,
      },
    );
  }

  #disarm(joined: Joined): void {
    clearTimeout(joined.timer);
    joined.timer = undefined;
    if (joined.onAbort !== null) joined.request.signal?.removeEventListener("abort", joined.onAbort);
    joined.onAbort = null;
  }

  /** Nobody waits in the slot any more: it leaves the wait graph. */
  #stopWaiting(slot: Slot): void {
    if (slot.waiting !== null) this.#waits.leave(slot.waiting);
    slot.waiting = null;
  }

  #fail(channel: Channel, slot: Slot, error: CollectiveError): void {
    if (slot.failed !== null) return;
    slot.failed = error;
    this.#stopWaiting(slot);
    for (const j of slot.joined) {
      if (!j) continue;
      this.#disarm(j);
      j.reject(error);
    }
    if (slot.count === channel.devices.length) channel.slots.delete(slot.index);
  }

  /** Every participant has joined: forget the slot, and run it unless it failed. */
  #complete(channel: Channel, slot: Slot): void {
    channel.slots.delete(slot.index);
    this.#stopWaiting(slot);
    for (const j of slot.joined) if (j) this.#disarm(j);
    if (slot.failed !== null) return;
    slot.started = true;
    const entries: RunEntry[] = slot.joined.map((j, i) => ({
      part: j!.part!,
      name: deviceName(channel.devices[i]!),
      resolve: j!.resolve,
      reject: j!.reject,
    }));
    runSlot(slot.what, entries, (error) => {
      for (const e of entries) e.reject(error);
    }, (ms) => this.sites.record(slot.site, slot.bytes, ms));
  }
}
