/**
 * Device timing of one stream with `timestamp-query`.
 *
 * While any profile is open, every compute pass of the stream gets
 * `timestampWrites` and holds exactly one dispatch, so each dispatch has its
 * own device start and end (CubeCL timestamps only the first pass of a profile
 * and under-measures; this does not). Queries are resolved into a readback
 * buffer at every submit and read back lazily, all pending batches with one
 * map: profiling never waits per kernel.
 *
 * A profile covers the passes opened between its start and its end, across
 * any number of submits; its duration runs from the start of the first of
 * them to the end of the last.
 *
 * @module
 */

import type { ServerError } from "../errors.ts";
import type { ProfilingToken, StreamId } from "../ids.ts";
import type { DispatchTiming } from "../contract/types.ts";
import type { FastReads } from "../memory/fast_reads.ts";
import { ReadbackBuffer, type ReadbackPool } from "../memory/readback_pool.ts";
import { OpenProfiles } from "./_open_profiles.ts";

interface PassRecord {
  seq: number;
  name: string;
}

interface Batch {
  readback: ReadbackBuffer;
  /** Bytes of timestamps in `readback`. */
  bytes: number;
  resolve: GPUBuffer;
  passes: PassRecord[];
  submitted: boolean;
}

/** Where a profiler's readback buffers come from: its stream's pool, mapped early with fast reads. */
export interface ProfilerReadbacks {
  /** The stream's read-back staging buffers. */
  pool: ReadbackPool;
  /** Whether to map them early. */
  fastReads: FastReads;
}

const QUERIES = 512;

/** The origin of device time shared by the profilers of one server's streams. */
export interface TimestampOrigin {
  /** The first timestamp read back by any of them, or null before any was. */
  ticks: bigint | null;
}

/** Submitted batches left unread before always-on logging reads them back in the background. */
const LOG_BATCHES = 8;

/** Timestamp profiler of one stream. */
export class TimestampProfiler {
  #device: GPUDevice;
  #label: string;
  #stream: StreamId;
  /** First pass sequence number of each open profile. */
  #open: OpenProfiles<number>;
  /** Receives every dispatch timing read back (always-on logging), or null. */
  #log: ((t: DispatchTiming) => void) | null = null;
  #seq = 0;
  #querySet: GPUQuerySet | null = null;
  #used = 0;
  #from = 0;
  #current: PassRecord[] = [];
  #batches: Batch[] = [];
  #timings = new Map<number, DispatchTiming>();
  #origin: TimestampOrigin;
  #reading: Promise<void> | null = null;
  #retired: GPUQuerySet[] = [];
  #ending = new Map<number, number>();
  #readbacks: ProfilerReadbacks | null;

  /**
   * Creates the profiler.
   *
   * @param device The device (with `timestamp-query`).
   * @param stream The stream slot profiled.
   * @param label Label prefix of its GPU objects.
   * @param origin Origin of device time, shared by the profilers of the server's streams.
   * @param readbacks The stream's staging pool and fast-reads switch; without
   * them each batch gets its own readback buffer, read through the spec path.
   */
  constructor(
    device: GPUDevice,
    stream: StreamId,
    label: string,
    origin: TimestampOrigin = { ticks: null },
    readbacks: ProfilerReadbacks | null = null,
  ) {
    this.#readbacks = readbacks;
    this.#origin = origin;
    this.#device = device;
    this.#stream = stream;
    this.#label = label;
    this.#open = new OpenProfiles(stream);
  }

  /** True while passes must be timestamped (a profile is open, or always-on logging). */
  get active(): boolean {
    return this.#open.size > 0 || this.#log !== null;
  }

  /**
   * Keeps timestamping on without an open profile (profile-level logging):
   * every dispatch timing read back is handed to `log`. Timings are read back
   * by `collect()`, and in the background once a few submits are pending, so
   * a program that never syncs holds a bounded number of readback buffers.
   *
   * @param log Receives each timing once, or null to stop.
   */
  logTo(log: ((t: DispatchTiming) => void) | null): void {
    this.#log = log;
  }

  /** Number of profiles open. */
  get openCount(): number {
    return this.#open.size;
  }

  /** True when the query set has no room for another pass (`passDescriptor` would return null). */
  get full(): boolean {
    return this.#querySet !== null && this.#used + 2 > QUERIES;
  }

  /** True when passes were timestamped since the last `resolve`. */
  get unresolved(): boolean {
    return this.#current.length > 0;
  }

  /**
   * Opens a profile: it covers passes opened from now on.
   *
   * @returns The token.
   */
  start(): ProfilingToken {
    return this.#open.open(this.#seq);
  }

  /**
   * Whether a token names a profile open on this stream.
   *
   * @param token The token.
   * @returns True until the profile is ended.
   */
  isOpen(token: ProfilingToken): boolean {
    return this.#open.has(token);
  }

  /**
   * Closes a profile. Call after the stream has submitted (so its passes are resolved).
   *
   * @param token The token from `start`.
   * @returns A promise of the profile's dispatch timings.
   * @throws {ProfileError} `not-registered` for an unknown or already ended token;
   * `unknown` when errors were drained while it was open.
   */
  end(token: ProfilingToken): { ticks: Promise<DispatchTiming[]> } {
    const from = this.#open.close(token);
    const to = this.#seq;
    this.#ending.set(token.id, from);
    return {
      ticks: this.collect().then(() => {
        const out: DispatchTiming[] = [];
        for (let s = from; s < to; s++) {
          const t = this.#timings.get(s);
          if (t !== undefined) out.push(t);
        }
        return out;
      }).finally(() => {
        this.#ending.delete(token.id);
        this.#prune();
      }),
    };
  }

  /** Marks every open profile as failed with the drained errors. */
  fail(errors: readonly ServerError[]): void {
    this.#open.fail(errors);
  }

  /**
   * Timestamp writes for the next pass, or null when the query set is full
   * (the stream submits, which resolves it, and asks again).
   *
   * @param label The pass label.
   * @returns The pass descriptor, or null.
   */
  passDescriptor(label: string): GPUComputePassDescriptor | null {
    if (this.#querySet === null) {
      this.#querySet = this.#device.createQuerySet({
        label: `${this.#label} timestamps`,
        type: "timestamp",
        count: QUERIES,
      });
      this.#used = 0;
      this.#from = 0;
    }
    if (this.#used + 2 > QUERIES) return null;
    const d: GPUComputePassDescriptor = {
      label,
      timestampWrites: {
        querySet: this.#querySet,
        beginningOfPassWriteIndex: this.#used,
        endOfPassWriteIndex: this.#used + 1,
      },
    };
    this.#used += 2;
    this.#current.push({ seq: this.#seq++, name: "" });
    return d;
  }

  /** Names the dispatch of the current pass. */
  noteDispatch(name: string): void {
    const last = this.#current[this.#current.length - 1];
    if (last !== undefined && last.name === "") last.name = name;
  }

  /**
   * Encodes the resolution of the passes timestamped since the last call into
   * a readback buffer. The stream calls it before finishing an encoder.
   *
   * @param encoder The stream's encoder, with no pass open.
   */
  resolve(encoder: GPUCommandEncoder): void {
    if (this.#current.length === 0 || this.#querySet === null) return;
    const count = this.#used - this.#from;
    const bytes = count * 8;
    const resolve = this.#device.createBuffer({
      label: `${this.#label} timestamp resolve`,
      size: bytes,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    const rb = this.#readbacks;
    const readback = rb === null
      ? new ReadbackBuffer(this.#device, bytes, `${this.#label} timestamp readback`)
      : rb.pool.acquire(bytes, rb.fastReads.active);
    encoder.resolveQuerySet(this.#querySet, this.#from, count, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, readback.buffer, 0, bytes);
    this.#batches.push({ readback, bytes, resolve, passes: this.#current, submitted: false });
    this.#current = [];
    this.#from = this.#used;
    if (this.#used + 2 > QUERIES) {
      this.#retired.push(this.#querySet);
      this.#querySet = null;
    }
  }

  /** Marks resolved batches as submitted (called after the stream's submit). */
  submitted(): void {
    for (const b of this.#batches) b.submitted = true;
    for (const q of this.#retired) q.destroy();
    this.#retired = [];
    if (this.#log !== null && this.#reading === null && this.#batches.length >= LOG_BATCHES) {
      this.collect().catch(() => {}); // a failure (device loss) is reported by the calls that wait
    }
  }

  /**
   * Reads back every submitted batch with one map wait and records its
   * timings. Concurrent calls share one read.
   */
  collect(): Promise<void> {
    if (this.#reading !== null) return this.#reading.then(() => this.collect());
    const batches = this.#batches.filter((b) => b.submitted);
    if (batches.length === 0) return Promise.resolve();
    this.#batches = this.#batches.filter((b) => !b.submitted);
    const rb = this.#readbacks;
    const early = rb !== null && rb.fastReads.active;
    this.#reading = this.#map(batches, early).then(async () => {
      let times: BigUint64Array[];
      try {
        times = batches.map((b) => new BigUint64Array(b.readback.buffer.getMappedRange(0, b.bytes)));
      } catch (cause) {
        if (!early) throw cause;
        // An early range could not be read: the spec path from here on, for these batches too.
        rb.fastReads.disable(`reading an early-mapped timestamp buffer threw (${String(cause)})`);
        for (const b of batches) b.readback.unmap();
        await this.#map(batches, false);
        times = batches.map((b) => new BigUint64Array(b.readback.buffer.getMappedRange(0, b.bytes)));
      }
      batches.forEach((b, k) => {
        const t = times[k]!;
        const base = this.#origin.ticks ??= t[0]!;
        b.passes.forEach((p, i) => {
          const start = Number(t[2 * i]! - base);
          const end = Number(t[2 * i + 1]! - base);
          if (p.name === "") return;
          const timing = { name: p.name, stream: this.#stream, start, end };
          this.#timings.set(p.seq, timing);
          this.#log?.(timing);
        });
        b.readback.unmap();
        this.#giveBack(b.readback);
        b.resolve.destroy();
      });
      if (this.#log !== null) this.#prune(); // logged: keep only what an open or ending profile covers
    }).catch((e: unknown) => {
      // The map failed (the device is gone): free the buffers it would have freed.
      for (const b of batches) {
        this.#discard(b.readback);
        b.resolve.destroy();
      }
      throw e;
    }).finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  /** Maps the batches' readback buffers (early where allowed), settling once every one is mapped. */
  #map(batches: readonly Batch[], early: boolean): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const b of batches) {
      const w = b.readback.map(b.bytes, early);
      if (w !== null) waits.push(w);
    }
    if (early) this.#readbacks?.pool.primeWanted();
    return Promise.all(waits).then(() => {});
  }

  /** Puts a readback buffer back in its pool (destroys one of its own). */
  #giveBack(b: ReadbackBuffer): void {
    if (this.#readbacks === null) b.destroy();
    else this.#readbacks.pool.release(b);
  }

  /** Destroys a readback buffer (from its pool: once its early map settles). */
  #discard(b: ReadbackBuffer): void {
    if (this.#readbacks === null) b.destroy();
    else this.#readbacks.pool.discard(b);
  }

  #prune(): void {
    let min = this.#seq;
    for (const from of this.#open.starts()) min = Math.min(min, from);
    for (const from of this.#ending.values()) min = Math.min(min, from);
    for (const seq of this.#timings.keys()) if (seq < min) this.#timings.delete(seq);
  }

  /** Destroys the profiler's GPU objects. */
  destroy(): void {
    this.#querySet?.destroy();
    for (const q of this.#retired) q.destroy();
    this.#retired = [];
    for (const b of this.#batches) {
      this.#discard(b.readback);
      b.resolve.destroy();
    }
    this.#batches = [];
  }
}
