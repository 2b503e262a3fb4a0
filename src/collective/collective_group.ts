/**
 * The rendezvous of a communicator (CubeCL's communicator of a sorted device
 * set, keyed by its `CommunicationId`): the `n`-th call of each participant
 * on a channel joins slot `n` of that channel; the slot runs once every
 * participant has joined. All-reduces use one channel whose participants are
 * the set's devices in rank order; each direction of a point-to-point copy
 * is its own channel (the `n`-th send from A to B meets the `n`-th receive on
 * B from A).
 *
 * A slot fails for every participant, joined or still to join, when they
 * disagree on the call (`mismatch`), when one does not join within its
 * timeout (`timeout`) or aborts its wait (`aborted`), when a participant's
 * device goes away (`device-lost`), or when a part fails before the result
 * exists. A failed slot still takes the late participants' calls, so the
 * slot counters of every participant stay aligned and later calls run.
 *
 * @module
 */

import { CollectiveError } from "../errors.ts";
import type { DeviceId } from "../contract/types.ts";
import type { CollectivePart, JoinRequest, ReduceSite } from "./collective_parts.ts";
import { participantFailure, type RunEntry, runSlot } from "./collective_runs.ts";
import { deviceName } from "./device_ids.ts";
import { SitePicker } from "./site_picker.ts";

interface Joined {
  readonly request: JoinRequest;
  part: CollectivePart | null;
  readonly resolve: () => void;
  readonly reject: (e: CollectiveError) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  onAbort: (() => void) | null;
}

interface Slot {
  readonly index: number;
  readonly signature: string;
  readonly what: string;
  /** Where an all-reduce reduces, fixed by its first participant (`host` for copies). */
  readonly site: ReduceSite;
  /** Bytes per participant of an all-reduce (0 for copies). */
  readonly bytes: number;
  readonly joined: (Joined | undefined)[];
  count: number;
  failed: CollectiveError | null;
  started: boolean;
}

interface Channel {
  /** The participants' devices, by position. */
  readonly devices: readonly DeviceId[];
  /** Calls made by each position so far: the next call joins slot `counters[position]`. */
  readonly counters: number[];
  readonly slots: Map<number, Slot>;
}

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

  /**
   * Creates the communicator.
   *
   * @param key The key of the sorted set.
   * @param devices The devices, sorted.
   * @param options `hostOnly`: a member reduces on the host only (a worker client's device).
   */
  constructor(key: string, devices: readonly DeviceId[], options: { hostOnly?: boolean } = {}) {
    this.key = key;
    this.devices = devices;
    this.#hostOnly = options.hostOnly ?? false;
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
    this.#closed ??= new CollectiveError(
      "device-lost",
      `collective of ${this.key}: device ${name} was closed or lost; open the devices again and retry`,
      { culprit: name, cause },
    );
    for (const channel of this.#channels.values()) {
      for (const slot of channel.slots.values()) {
        if (slot.started || slot.failed !== null) continue;
        this.#fail(
          channel,
          slot,
          new CollectiveError(
            "device-lost",
            `${slot.what}: device ${name} was closed or lost before every participant joined`,
            {
              culprit: name,
              cause,
            },
          ),
        );
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
      channel = { devices, counters: devices.map(() => 0), slots: new Map() };
      this.#channels.set(key, channel);
    }
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
      };
      channel.slots.set(index, slot);
    }
    const joined: Joined = { request, part: null, resolve, reject, timer: undefined, onAbort: null };
    slot.joined[position] = joined;
    slot.count++;
    const name = deviceName(devices[position]!);
    if (slot.failed !== null) {
      reject(slot.failed);
    } else if (request.signature !== slot.signature) {
      const first = slot.joined.findIndex((j) => j !== undefined && j !== joined);
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
    } else {
      try {
        joined.part = request.begin(slot.site);
      } catch (cause) {
        this.#fail(channel, slot, participantFailure(request.what, name, cause));
      }
      if (slot.failed === null && slot.count < devices.length) this.#arm(channel, slot, joined, name);
    }
    if (slot.count === devices.length) this.#complete(channel, slot);
    return promise;
  }

  /** Starts the participant's timeout and abort listener while others are missing. */
  #arm(channel: Channel, slot: Slot, joined: Joined, name: string): void {
    const { timeoutMs, signal } = joined.request;
    joined.timer = setTimeout(() => {
      const missing = channel.devices.filter((_, i) => slot.joined[i] === undefined).map(deviceName);
      this.#fail(
        channel,
        slot,
        new CollectiveError(
          "timeout",
          `${slot.what}: ${
            missing.join(", ")
          } did not join within ${timeoutMs} ms (slot ${slot.index} of ${this.key}, waited for by ${name})`,
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

  #fail(channel: Channel, slot: Slot, error: CollectiveError): void {
    if (slot.failed !== null) return;
    slot.failed = error;
    for (const j of slot.joined) {
      if (j === undefined) continue;
      this.#disarm(j);
      j.reject(error);
    }
    if (slot.count === channel.devices.length) channel.slots.delete(slot.index);
  }

  /** Every participant has joined: forget the slot, and run it unless it failed. */
  #complete(channel: Channel, slot: Slot): void {
    channel.slots.delete(slot.index);
    for (const j of slot.joined) this.#disarm(j!);
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
