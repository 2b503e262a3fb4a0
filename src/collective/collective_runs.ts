/**
 * What a slot does once every participant has joined: an all-reduce waits
 * for every source on the host (each device mapped once, all at the same
 * time), reduces on the host or on the root's device, and hands the result to
 * every participant; a point-to-point copy hands the sender's bytes to the
 * receiver. A participant whose part fails before the result exists fails the
 * slot for everyone; one whose delivery fails fails alone.
 *
 * @module
 */

import { CollectiveError, DeviceLostError } from "../errors.ts";
import type { RecvPart, ReducePart, SendPart } from "./collective_parts.ts";
import { type CollectivePart, DTYPE_SIZE } from "./collective_parts.ts";
import { reduceOnHost } from "./host_reduce.ts";

/** A joined participant of a slot that runs. */
export interface RunEntry {
  /** Its part. */
  readonly part: CollectivePart;
  /** Its device's name, for messages. */
  readonly name: string;
  /** Settles its call successfully. */
  resolve(): void;
  /** Fails its call. */
  reject(error: CollectiveError): void;
}

/**
 * The collective error of a participant's failure: its own `CollectiveError`
 * as is, `device-lost` for a `DeviceLostError`, else `device-error`.
 *
 * @param what The call, for the message.
 * @param name The participant's device.
 * @param cause What its part failed with.
 * @returns The error every participant concerned gets.
 */
export function participantFailure(what: string, name: string, cause: unknown): CollectiveError {
  if (cause instanceof CollectiveError) return cause;
  const lost = cause instanceof DeviceLostError;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new CollectiveError(
    lost ? "device-lost" : "device-error",
    `${what}: device ${name} ${lost ? "was lost" : "failed"} during the collective: ${message}`,
    { culprit: name, cause },
  );
}

/**
 * Marks the source read a part began at the join handled: it may fail while
 * the slot still waits for other participants (nobody listens to it until
 * the slot runs), or after the slot failed and will never run (the device
 * closed or lost before the read landed). The run still sees its failure and
 * reports it; a failed slot has reported its own.
 *
 * @param part The part just made.
 * @returns The part.
 */
export function quietSource<P extends CollectivePart>(part: P): P {
  if (part.kind !== "recv") part.source?.catch(() => {});
  return part;
}

/** A part's failure, tagged with the position of its participant. */
class PartFailure {
  constructor(readonly position: number, readonly cause: unknown) {}
}

function tagged<T>(p: Promise<T>, position: number): Promise<T> {
  return p.catch((cause) => {
    throw new PartFailure(position, cause);
  });
}

/**
 * Runs a slot whose participants have all joined (in position order).
 *
 * @param what The call, for messages.
 * @param entries The participants, by position (ranks; sender then receiver).
 * @param failAll Fails every participant's call with one error.
 * @param measured Told how long a successful all-reduce took, in milliseconds.
 */
export function runSlot(
  what: string,
  entries: readonly RunEntry[],
  failAll: (error: CollectiveError) => void,
  measured: (ms: number) => void,
): void {
  const fail = (e: unknown) => {
    const f = e instanceof PartFailure ? e : new PartFailure(0, e);
    failAll(participantFailure(what, entries[f.position]?.name ?? "?", f.cause));
  };
  const start = performance.now();
  const run = entries[0]!.part.kind === "all-reduce" ? runAllReduce(what, entries) : runCopy(entries);
  run.then((ok) => {
    if (ok) measured(performance.now() - start);
  }, fail);
}

/** Resolves true once every participant's result is written (false when one of them failed). */
async function runAllReduce(what: string, entries: readonly RunEntry[]): Promise<boolean> {
  const parts = entries.map((e) => e.part as ReducePart);
  const root = parts[0]!;
  let result: Uint8Array;
  if (root.site === "host") {
    const inputs = await Promise.all(parts.map((p, r) => tagged(p.source!, r)));
    result = splittable(parts, inputs) ? await reduceSplit(parts, inputs) : reduceOnHost(inputs, root.dtype, root.op);
  } else {
    const others = await Promise.all(parts.slice(1).map((p, r) => tagged(p.source!, r + 1)));
    result = await tagged(root.reduceHere!(others), 0);
  }
  const delivered = entries.map((e, r) => {
    if (root.site === "device" && r === 0) return (e.resolve(), true); // its destination holds the result already
    return parts[r]!.deliver(result).then(() => (e.resolve(), true), (cause) => {
      e.reject(participantFailure(what, e.name, cause));
      return false;
    });
  });
  return (await Promise.all(delivered)).every((ok) => ok);
}

/** True when every participant can reduce a range on its own thread and every input is shared memory. */
function splittable(parts: readonly ReducePart[], inputs: readonly Uint8Array[]): boolean {
  return parts.length > 1 && parts.every((p) => p.reduceRange !== undefined) &&
    inputs.every((x) => x.buffer instanceof SharedArrayBuffer);
}

/** Splits a host reduction between the participants' threads (each reduces 1/N of the elements into input 0). */
async function reduceSplit(parts: readonly ReducePart[], inputs: readonly Uint8Array[]): Promise<Uint8Array> {
  const size = DTYPE_SIZE[parts[0]!.dtype];
  const elements = inputs[0]!.byteLength / size;
  const share = Math.ceil(elements / parts.length);
  await Promise.all(parts.map((p, r) => {
    const from = Math.min(elements, r * share) * size;
    const to = Math.min(elements, (r + 1) * share) * size;
    return from === to ? undefined : tagged(p.reduceRange!(inputs, from, to), r);
  }));
  return inputs[0]!;
}

async function runCopy(entries: readonly RunEntry[]): Promise<boolean> {
  const [from, to] = entries as [RunEntry, RunEntry];
  const bytes = await tagged((from.part as SendPart).source, 0);
  try {
    await (to.part as RecvPart).deliver(bytes);
  } catch (cause) {
    throw new PartFailure(1, cause);
  }
  from.resolve();
  to.resolve();
  return true;
}
