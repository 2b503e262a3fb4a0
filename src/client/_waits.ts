/**
 * Waits a caller may abandon, and the queued errors of the abandoned ones.
 *
 * `read`, `readMany`, `readTensor` and `sync` take an `AbortSignal`
 * (`WaitOptions`). Aborting abandons the wait only: the call was issued and
 * runs on, in order with the work around it, and its result is dropped when
 * it comes. A read or sync also drains its stream's queued errors, and an
 * abandoned one has nobody to raise them to: they are parked here, by device
 * link and stream slot, and the next draining call of a client on that slot
 * (`read`, `readMany`, `readTensor`, `sync`, `flush`) rejects with them. A
 * read or sync first waits for the abandoned calls of its slot still running
 * when it was made, so it sees what they drain.
 *
 * The reads requested in one tick share one device wait, and so one failure:
 * a failure that a live read raised after the abandoned read was issued
 * (the same message on the same slot) is not parked again, and one already
 * parked is dropped when a live read raises it. Failures are matched by
 * message because a worker client's reads each revive their own copy of it;
 * two drains that found the very same errors close together are then raised
 * once.
 *
 * None of this runs on the usual path: with no signal, and no wait with a
 * signal in flight and nothing parked (`quiet()`), a call goes straight to
 * its link.
 *
 * @module
 */

import { ServerUnhealthyError } from "../errors.ts";
import type { DeviceLink } from "../contract/device_link.ts";
import type { StreamId } from "../ids.ts";
import { describe } from "../_util/describe.ts";
import type { WaitOptions } from "./client_types.ts";

/** One stream of a device: where a client's calls go. */
interface WaitTarget {
  /** The device link. */
  readonly link: DeviceLink;
  /** The stream. */
  readonly stream: StreamId;
}

/** What drains: reads share their device wait (and failure) with the reads of their tick, syncs and flushes do not. */
type Draining = "read" | "sync" | "flush";

/** The abandoned calls of one stream slot still running, and the failures they drained, not yet raised. */
interface SlotWaits {
  readonly running: Set<Promise<unknown>>;
  readonly parked: ServerUnhealthyError[];
}

/** A wait with a signal: waiting, abandoned by its signal, or settled for its caller (a later abort is then ignored). */
interface Wait {
  /** Issue order among the waits with a signal. */
  readonly id: number;
  state: "waiting" | "abandoned" | "settled";
}

/** A failure a live read raised while waits with a signal were in flight, up to wait `upTo` (issued by then). */
interface Raised {
  readonly slot: number;
  readonly message: string;
  readonly upTo: number;
}

/** Per link, per slot, only while something runs or is parked there; a link is forgotten once it ends. */
const links = new Map<DeviceLink, Map<number, SlotWaits>>();
/** Links whose end is watched. */
const watched = new WeakSet<DeviceLink>();
/** The id the next wait with a signal gets. */
let nextId = 0;
/** Ids of the waits with a signal not yet settled (live or abandoned), over every link, oldest first. */
const inFlight = new Set<number>();
/** `inFlight.size` plus the failures parked: 0 on the usual path. */
let active = 0;
/**
 * Failures live reads raised while waits with a signal were in flight; each
 * is kept until every wait issued before it was raised has settled.
 */
let raised: Raised[] = [];

/**
 * True when no wait with a signal is in flight and no failure is parked: a
 * call without a signal then goes straight to its link.
 *
 * @returns Whether the usual path applies.
 */
export function quiet(): boolean {
  return active === 0;
}

/**
 * Checks a call's `WaitOptions`.
 *
 * @param options What the caller passed (undefined for none).
 * @param where The call, for messages.
 * @returns The signal, if any.
 * @throws {TypeError} When `options` is not an object, or its `signal` not an `AbortSignal`.
 */
export function waitSignal(options: WaitOptions | undefined, where: string): AbortSignal | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== "object") {
    throw new TypeError(`${where}: options must be an object such as { signal }, got ${describe(options)}`);
  }
  const signal: unknown = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`${where}: options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return signal;
}

/** Waits for the device (see `ComputeClient.sync`); the usual path is the client's. */
export function syncOn(t: WaitTarget, options: WaitOptions | undefined): Promise<void> {
  try {
    const signal = waitSignal(options, "sync");
    if (signal?.aborted) return Promise.reject(signal.reason);
    return waitFor(t, t.link.sync(t.stream), "sync", signal);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Submits and raises queued errors (see `ComputeClient.flush`); the usual path is the client's. */
export function flushOn(t: WaitTarget): Promise<void> {
  return waitFor(t, t.link.flush(t.stream), "flush");
}

/**
 * The rejection handler of a read on the usual path: notes a failure that
 * an abandoned read of the same device wait would otherwise park, then
 * passes it on.
 *
 * @param e What the read rejected with.
 * @throws Always, `e`.
 */
export function readFailed(e: unknown): never {
  if (inFlight.size !== 0 && e instanceof ServerUnhealthyError) noteRaised(e.stream, e.message);
  throw e;
}

/** Notes a failure a live read raised, for the abandoned reads issued so far (one of them may share it). */
function noteRaised(slot: number, message: string): void {
  raised.push({ slot, message, upTo: nextId - 1 });
}

/**
 * Waits for a draining call issued on `t`'s stream: for the abandoned calls
 * of its slot running now first (reads and syncs), then raises the failures
 * they parked with its own. With a signal, the returned promise rejects with
 * `signal.reason` once it aborts; the call runs on, and what it drains is
 * parked.
 *
 * @param t The client's link and stream.
 * @param work The call, issued.
 * @param kind What it is.
 * @param signal Abandons the wait; not yet aborted.
 * @returns The call's result; rejects with its failure, or with the failures parked on its slot.
 */
export function waitFor<T>(t: WaitTarget, work: Promise<T>, kind: Draining, signal?: AbortSignal): Promise<T> {
  const link = t.link;
  const slot = t.stream % link.maxStreams;
  const s = links.get(link)?.get(slot);
  const before = kind !== "flush" && s !== undefined && s.running.size > 0 ? [...s.running] : null;
  if (signal === undefined) return settle(link, slot, work, before, null, kind);
  const wait: Wait = { id: nextId++, state: "waiting" };
  inFlight.add(wait.id);
  active++;
  const settled = settle(link, slot, work, before, wait, kind);
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      if (wait.state !== "waiting") return;
      wait.state = "abandoned";
      track(link, slot, settled);
      reject(signal.reason);
    };
    signal.addEventListener("abort", abort, { once: true });
    settled.then((v) => {
      signal.removeEventListener("abort", abort);
      resolve(v);
    }, (e) => {
      signal.removeEventListener("abort", abort);
      reject(e);
    });
  });
}

/**
 * Settles a draining call: parks what an abandoned one drained (resolving
 * with nothing for nobody), else resolves or rejects for its caller, with the
 * failures parked on its slot.
 */
async function settle<T>(
  link: DeviceLink,
  slot: number,
  work: Promise<T>,
  before: readonly Promise<unknown>[] | null,
  wait: Wait | null,
  kind: Draining,
): Promise<T> {
  let value: T | undefined;
  let failure: unknown;
  let failed = false;
  try {
    value = await work;
  } catch (e) {
    failed = true;
    failure = e;
  }
  try {
    if (before !== null) await Promise.allSettled(before);
    if (wait?.state === "abandoned") {
      if (failed) park(link, slot, failure, kind, wait.id);
      return value as T;
    }
    if (wait !== null) wait.state = "settled";
    const own = failed && failure instanceof ServerUnhealthyError ? failure : null;
    if (own !== null && kind === "read") {
      // A read of the same device wait, abandoned, may have parked this failure, or may park it later.
      if (inFlight.size !== 0) noteRaised(slot, own.message);
      const mine = links.get(link)?.get(slot);
      if (mine !== undefined) removeParked(mine, (p) => p.message === own.message);
    }
    const parked = failed && own === null ? [] : takeParked(link, slot);
    if (parked.length === 0) {
      if (failed) throw failure;
      return value as T;
    }
    const errors = parked.flatMap((p) => p.errors);
    if (own !== null) errors.push(...own.errors);
    throw parked.length === 1 && own === null ? parked[0] : new ServerUnhealthyError(slot, errors);
  } finally {
    if (wait !== null) {
      inFlight.delete(wait.id);
      active--;
      if (raised.length > 0) {
        const oldest = inFlight.values().next().value;
        raised = oldest === undefined ? [] : raised.filter((r) => r.upTo >= oldest);
      }
    }
  }
}

/** Keeps what an abandoned call drained, for the next draining call of its slot. */
function park(link: DeviceLink, slot: number, failure: unknown, kind: Draining, id: number): void {
  // Anything else is not the stream's queued errors: a lost device is raised by every later call anyway.
  if (!(failure instanceof ServerUnhealthyError) || link.closed) return;
  const message = failure.message;
  // A live read that failed after this read was issued, with the same errors, shared its device wait.
  if (kind === "read" && raised.some((r) => r.slot === slot && r.message === message && id <= r.upTo)) return;
  const s = slotWaits(link, slot);
  if (s.parked.some((p) => p.message === message)) return; // another abandoned read of the same wait
  s.parked.push(failure);
  active++;
}

/** Counts an abandoned call as running on its slot until it settles. */
function track(link: DeviceLink, slot: number, settled: Promise<unknown>): void {
  const s = slotWaits(link, slot);
  s.running.add(settled);
  const done = () => {
    s.running.delete(settled);
    tidy(link, slot, s);
  };
  settled.then(done, done);
}

/** Takes the failures parked on a slot. */
function takeParked(link: DeviceLink, slot: number): ServerUnhealthyError[] {
  const s = links.get(link)?.get(slot);
  if (s === undefined || s.parked.length === 0) return [];
  return removeParked(s, () => true);
}

/** Removes the parked failures that `which` picks. */
function removeParked(s: SlotWaits, which: (p: ServerUnhealthyError) => boolean): ServerUnhealthyError[] {
  const taken = s.parked.filter(which);
  if (taken.length === 0) return taken;
  const kept = s.parked.filter((p) => !which(p));
  s.parked.length = 0;
  s.parked.push(...kept);
  active -= taken.length;
  return taken;
}

/** A slot's entry, made on first use; the link is forgotten once it ends. */
function slotWaits(link: DeviceLink, slot: number): SlotWaits {
  let slots = links.get(link);
  if (slots === undefined) {
    links.set(link, slots = new Map());
    if (!watched.has(link)) {
      watched.add(link);
      link.ended.then(() => forget(link), () => forget(link));
    }
  }
  let s = slots.get(slot);
  if (s === undefined) slots.set(slot, s = { running: new Set(), parked: [] });
  return s;
}

/** Drops a slot's entry once nothing runs or is parked there. */
function tidy(link: DeviceLink, slot: number, s: SlotWaits): void {
  if (s.running.size > 0 || s.parked.length > 0) return;
  const slots = links.get(link);
  if (slots?.get(slot) !== s) return;
  slots.delete(slot);
  if (slots.size === 0) links.delete(link);
}

/** Forgets an ended link's parked failures (its calls raise `DeviceLostError` from now on). */
function forget(link: DeviceLink): void {
  const slots = links.get(link);
  if (slots === undefined) return;
  for (const s of slots.values()) {
    active -= s.parked.length;
    s.parked.length = 0;
  }
  links.delete(link);
}
