/**
 * The collectives one device has under way (CubeCL's communication stream,
 * as a per-device record): what each reads and writes, so that a later
 * collective reading memory an earlier one writes waits for that write, and
 * one writing memory an earlier one reads or writes waits for that read or
 * write; and the failures `syncCollective` reports.
 *
 * @module
 */

import type { ManagedMemory } from "../contract/managed_memory.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { CollectiveError } from "../errors.ts";

/** A byte range of one memory. */
interface Range {
  readonly memory: ManagedMemory;
  readonly start: number;
  readonly end: number;
}

function rangeOf(b: BufferBinding): Range {
  return { memory: b.memory, start: b.offsetStart, end: b.size - b.offsetEnd };
}

function overlaps(a: Range | null, b: Range | null): boolean {
  return a !== null && b !== null && a.memory === b.memory && a.start < b.end && b.start < a.end;
}

/** One collective of the device, from its call until it settles. */
export class CollectiveOp {
  /** Call order on the device. */
  readonly seq: number;
  /** What it reads, or null. */
  readonly reads: Range | null;
  /** What it writes, or null. */
  readonly writes: Range | null;
  /** Settles once its read is issued (or it settled without reading). */
  readonly readIssued: Promise<void>;
  /** Settles once the collective has settled on this device. */
  readonly done: Promise<void>;
  #readGate: Promise<unknown> | null;
  #writeGate: Promise<unknown> | null;
  #markRead: () => void;
  #markDone: () => void;

  /**
   * Creates the op, waiting on the ops under way it conflicts with.
   *
   * @param seq Call order.
   * @param reads What it reads, or null.
   * @param writes What it writes, or null.
   * @param pending The device's ops under way.
   */
  constructor(seq: number, reads: BufferBinding | null, writes: BufferBinding | null, pending: Iterable<CollectiveOp>) {
    this.seq = seq;
    this.reads = reads === null ? null : rangeOf(reads);
    this.writes = writes === null ? null : rangeOf(writes);
    const beforeRead: Promise<unknown>[] = [];
    const beforeWrite: Promise<unknown>[] = [];
    for (const op of pending) {
      if (overlaps(this.reads, op.writes)) beforeRead.push(op.done);
      if (overlaps(this.writes, op.writes)) beforeWrite.push(op.done);
      if (overlaps(this.writes, op.reads)) beforeWrite.push(op.readIssued);
    }
    this.#readGate = beforeRead.length === 0 ? null : Promise.allSettled(beforeRead);
    this.#writeGate = beforeWrite.length === 0 ? null : Promise.allSettled(beforeWrite);
    const read = Promise.withResolvers<void>();
    const done = Promise.withResolvers<void>();
    this.readIssued = read.promise;
    this.done = done.promise;
    this.#markRead = read.resolve;
    this.#markDone = () => {
      read.resolve();
      done.resolve();
    };
  }

  /**
   * Issues the op's read: at once when nothing it conflicts with is under
   * way (so it sees exactly the work queued before the call), else once
   * those have settled.
   *
   * @param read Issues the read.
   * @returns The bytes read.
   */
  read<T>(read: () => Promise<T>): Promise<T> {
    const issue = () => {
      try {
        return read();
      } finally {
        this.#markRead();
      }
    };
    return this.#readGate === null ? issue() : this.#readGate.then(issue);
  }

  /**
   * Runs the op's write: at once when nothing it conflicts with is under way, else after.
   *
   * @param write Issues the write.
   * @returns Settles once it is issued.
   */
  async write<T>(write: () => T | Promise<T>): Promise<T> {
    if (this.#writeGate !== null) await this.#writeGate;
    return await write();
  }

  /**
   * Waits for everything the op's reads and writes conflict with.
   *
   * @returns Settles once both gates are open.
   */
  async gates(): Promise<void> {
    if (this.#readGate !== null) await this.#readGate;
    if (this.#writeGate !== null) await this.#writeGate;
  }

  /** Marks the op settled. */
  settle(): void {
    this.#markDone();
  }
}

/** The ops of one device under way, and the failures not yet reported. */
export class CollectiveOps {
  #seq = 0;
  #pending = new Set<CollectiveOp>();
  #failures: { seq: number; error: CollectiveError }[] = [];

  /**
   * Starts tracking a collective of the device.
   *
   * @param reads What it reads, or null.
   * @param writes What it writes, or null.
   * @returns The op.
   */
  open(reads: BufferBinding | null, writes: BufferBinding | null): CollectiveOp {
    const op = new CollectiveOp(++this.#seq, reads, writes, this.#pending);
    this.#pending.add(op);
    return op;
  }

  /**
   * Tracks the op until `outcome` settles; returns the outcome, marked handled
   * (a caller that ignores it gets no unhandled rejection: `drain` reports it).
   *
   * @param op The op.
   * @param outcome The collective's result on this device.
   * @returns The same outcome.
   */
  track(op: CollectiveOp, outcome: Promise<void>): Promise<void> {
    const settled = outcome.then(
      () => {
        this.#pending.delete(op);
        op.settle();
      },
      (error: CollectiveError) => {
        this.#pending.delete(op);
        this.#failures.push({ seq: op.seq, error });
        op.settle();
        throw error;
      },
    );
    settled.catch(() => {});
    return settled;
  }

  /**
   * Waits for every op opened so far, then throws the earliest failure among
   * them not yet reported (each failure is reported once).
   *
   * @returns Settles once they have settled.
   * @throws {CollectiveError} The earliest unreported failure.
   */
  async drain(): Promise<void> {
    const upTo = this.#seq;
    await Promise.allSettled([...this.#pending].filter((op) => op.seq <= upTo).map((op) => op.done));
    const mine = this.#failures.filter((f) => f.seq <= upTo);
    if (mine.length === 0) return;
    this.#failures = this.#failures.filter((f) => f.seq > upTo);
    throw mine[0]!.error;
  }
}
