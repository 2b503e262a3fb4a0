/**
 * What a participant brings to a collective, as the rendezvous sees it: host
 * bytes in, host bytes out. A participant is any device that can produce its
 * source bytes and write a result: a server on this thread today, a device
 * hosted in a Worker later (its parts are then messages that move
 * `ArrayBuffer`s). The reduction happens where it is cheapest: on the host
 * thread that runs the rendezvous, or on the root's device.
 *
 * @module
 */

import type { ElemType, ReduceOperation } from "../contract/types.ts";

/** Where an all-reduce reduces: on the host thread, or on the root's device (rank 0). */
export type ReduceSite = "host" | "device";

/** Bytes per element of each collective dtype. */
export const DTYPE_SIZE: Readonly<Record<ElemType, number>> = { f32: 4, i32: 4, u32: 4, f16: 2 };

/** A participant's part of an all-reduce. */
export interface ReducePart {
  /** The part's kind. */
  readonly kind: "all-reduce";
  /** Element type. */
  readonly dtype: ElemType;
  /** The reduction. */
  readonly op: ReduceOperation;
  /** Where the slot reduces (the same for every participant: it is part of the signature). */
  readonly site: ReduceSite;
  /**
   * The source bytes on the host, read when the participant joined (after its
   * earlier collectives that write them); null for the root of a device
   * reduction, whose source stays on its device.
   */
  readonly source: Promise<Uint8Array<ArrayBuffer>> | null;
  /**
   * Writes the result into the destination (queued on the device: work issued
   * after it resolves sees it).
   *
   * @param result The reduced bytes (shared by every participant: never detach or modify it).
   */
  deliver(result: Uint8Array): Promise<void>;
  /**
   * The root of a device reduction only: reduces its own source with the
   * others' bytes on its device, into its destination.
   *
   * @param others The other participants' bytes, in rank order.
   * @returns The reduced bytes, for the others.
   */
  reduceHere?(others: readonly Uint8Array<ArrayBuffer>[]): Promise<Uint8Array>;
  /**
   * A participant whose device lives in a Worker: reduces the bytes `from` to
   * `to` of every input (all over shared memory) into `inputs[0]`, in place,
   * on its own thread. When every participant has it, a host reduction of
   * shared inputs is split between them instead of running on this thread.
   *
   * @param inputs Every participant's bytes, in rank order, over `SharedArrayBuffer`s.
   * @param from First byte of the range (a whole number of elements).
   * @param to End of the range.
   */
  reduceRange?(inputs: readonly Uint8Array[], from: number, to: number): Promise<void>;
}

/** The sending side of a point-to-point copy. */
export interface SendPart {
  /** The part's kind. */
  readonly kind: "send";
  /** The bytes sent, read when the sender joined. */
  readonly source: Promise<Uint8Array<ArrayBuffer>>;
}

/** The receiving side of a point-to-point copy. */
export interface RecvPart {
  /** The part's kind. */
  readonly kind: "recv";
  /**
   * Writes the bytes received into the destination.
   *
   * @param bytes The bytes sent.
   */
  deliver(bytes: Uint8Array<ArrayBuffer>): Promise<void>;
}

/** One participant's part. */
export type CollectivePart = ReducePart | SendPart | RecvPart;

/** How a slot of an all-reduce picks its site: fixed, or `auto` (the faster one measured for the size). */
export interface SiteChoice {
  /** The participants' `reduceOn` (part of the signature: the same on every participant). */
  readonly reduceOn: "auto" | ReduceSite;
  /** Bytes per participant. */
  readonly bytes: number;
  /** Element type (`f16` reduces on the host). */
  readonly dtype: ElemType;
}

/** A participant's call, as it joins its slot. */
export interface JoinRequest {
  /**
   * What every participant of a slot must agree on (operation, element type,
   * reduction, byte count, `reduceOn`); a difference fails the slot with `mismatch`.
   */
  readonly signature: string;
  /** For an all-reduce: how its slot picks where to reduce (the first participant to join decides for all). */
  readonly site?: SiteChoice;
  /** The call, for messages (e.g. `"allReduce of 400 B f32 sum"`). */
  readonly what: string;
  /** Milliseconds to wait for the other participants to join. */
  readonly timeoutMs: number;
  /** Aborts the wait for the other participants. */
  readonly signal?: AbortSignal;
  /**
   * Makes the part once the participant has joined a slot that has not failed
   * (so a failed slot reads nothing).
   *
   * @param site Where the slot reduces (`host` for copies).
   */
  begin(site: ReduceSite): CollectivePart;
}
