/**
 * State shared by every stream of one device: the queue, the caches, the
 * submission counter and the completion tracking that releases cross-stream
 * pins.
 *
 * Every `queue.submit` gets an index. When a completion wait (`mapAsync` or
 * `onSubmittedWorkDone`) started after submission `i` resolves, every
 * submission up to `i` has finished on the device, so the pins taken by those
 * submissions are released. Deno's waits drain the whole queue, which is what
 * makes this exact.
 *
 * @module
 */

import type { BindGroupCache } from "../kernel/bind_group_cache.ts";
import type { PipelineCache } from "../kernel/pipeline_cache.ts";
import { CountCopier } from "../kernel/count_copy.ts";
import type { ManagedMemory } from "../contract/managed_memory.ts";
import { EMPTY_BINDING_BYTES } from "../contract/launch_checks.ts";
import { DeviceLostError, ServerError } from "../errors.ts";
import { allocateStorageId } from "../ids.ts";
import type { ServerLogger } from "../logger.ts";
import { FastReads } from "../memory/fast_reads.ts";

/** Limits and settings streams need. */
export interface StreamSettings {
  /** Dispatches per submit. */
  tasksMax: number;
  /** Open the next encoder and pass right after each submit. */
  openPassAhead: boolean;
  /** Number of stream slots. */
  maxStreams: number;
  /** `minStorageBufferOffsetAlignment`. */
  storageOffsetAlignment: number;
  /** Alignment of info arena offsets: storage's and uniform's offset alignments, the larger. */
  infoOffsetAlignment: number;
  /** Pool alignment. */
  alignment: number;
  /** `maxBufferSize`. */
  maxBufferSize: number;
  /** `maxStorageBufferBindingSize`: the most info bytes one launch may bind. */
  maxBindingSize: number;
  /** Bytes above which an upload is split into chunks with a submit after each. */
  uploadChunkThreshold: number;
  /** Bytes per upload chunk. */
  uploadChunkSize: number;
}

/** Shared per-device state. */
export class DeviceContext {
  /** The device. */
  readonly device: GPUDevice;
  /** Its queue. */
  readonly queue: GPUQueue;
  /** Bind groups of the device. */
  readonly bindGroups: BindGroupCache;
  /** Pipelines of the device. */
  readonly pipelines: PipelineCache;
  /** Settings. */
  readonly settings: StreamSettings;
  /** The logger. */
  readonly logger: ServerLogger;
  /** Copies of indirect counts inside the open pass (counts in a page the launch also binds). */
  readonly countCopier: CountCopier;
  /** Compute passes begun so far by every stream (a pass break shows as one more). */
  passesBegun = 0;
  /** Whether read-backs and syncs map staging buffers early (off until the server turns it on). */
  readonly fastReads: FastReads = new FastReads();
  /** Index of the last `queue.submit`. */
  submitIndex = 0;
  /** Highest submission index known to have completed. */
  completedIndex = 0;
  /** The stream that acted last (receives uncaptured device errors). */
  current: { readonly errors: { push(e: ServerError): void } } | null = null;
  /** Set once the device is lost (or the server destroyed). */
  lost: DeviceLostError | null = null;
  /** Rejecters of the guarded promises still pending (see `guard`). */
  #guarded = new Set<(error: DeviceLostError) => void>();
  #pins: { index: number; memory: ManagedMemory }[] = [];
  #empty: { buffer: GPUBuffer; id: number; size: number } | null = null;

  /** A small scratch buffer bound in place of zero-byte bindings (WebGPU cannot bind 0 bytes). */
  get emptyBinding(): { buffer: GPUBuffer; id: number; size: number } {
    if (this.#empty === null) {
      const size = EMPTY_BINDING_BYTES;
      const buffer = this.device.createBuffer({
        label: "zero-byte binding scratch",
        size,
        usage: GPUBufferUsage.STORAGE,
      });
      this.#empty = { buffer, id: allocateStorageId(), size };
    }
    return this.#empty;
  }

  /**
   * Creates the instance.
   *
   * @param parts The device, queue, caches, settings and logger.
   */
  constructor(parts: {
    device: GPUDevice;
    bindGroups: BindGroupCache;
    pipelines: PipelineCache;
    settings: StreamSettings;
    logger: ServerLogger;
  }) {
    this.device = parts.device;
    this.queue = parts.device.queue;
    this.bindGroups = parts.bindGroups;
    this.pipelines = parts.pipelines;
    this.settings = parts.settings;
    this.logger = parts.logger;
    this.countCopier = new CountCopier(parts.device, parts.settings.storageOffsetAlignment);
  }

  /**
   * Forgets what the device's caches keep of a destroyed buffer: its bind
   * groups and its count copies' bind groups.
   *
   * @param id The buffer's storage id.
   */
  storageDestroyed(id: number): void {
    this.bindGroups.evictStorage(id);
    this.countCopier.evict(id);
  }

  /**
   * The error of a device call that failed because the device went away: the
   * recorded loss when it is known, else one saying what failed (a destroy or
   * loss can fail a map before `device.lost` settles).
   *
   * @param what What failed, with the label of what it failed on.
   * @param cause The failure.
   * @returns The loss.
   */
  lossOf(what: string, cause: unknown): DeviceLostError {
    return this.lost ?? new DeviceLostError(what, { reason: "unknown", cause });
  }

  /**
   * Records that the device is gone: every guarded promise rejects with `error`.
   * Only the first call counts.
   *
   * @param error The loss.
   */
  markLost(error: DeviceLostError): void {
    if (this.lost !== null) return;
    this.lost = error;
    for (const reject of this.#guarded) reject(error);
    this.#guarded.clear();
    this.releaseAllPins();
  }

  /**
   * Races `p` against device loss: the result rejects with the
   * `DeviceLostError` as soon as the device is lost, so nothing waits forever.
   * A raw WebGPU failure of `p` (not one of the runtime's errors) waits one
   * timer turn before it is passed on: when it is the loss itself (an early
   * map of a destroyed device throws at once, and `device.lost` resolves a
   * turn later), the caller gets the `DeviceLostError`, as with the spec path.
   * Nothing is retained once `p` settles (a `Promise.race` against one
   * long-lived loss promise would keep a reaction per call on it, about 300
   * bytes per `sync`, `flush` or `read` for the client's lifetime).
   *
   * @param p A promise of device work.
   * @returns `p`, or a rejection on loss.
   */
  guard<T>(p: Promise<T>): Promise<T> {
    if (this.lost !== null) {
      p.catch(() => {});
      return Promise.reject(this.lost);
    }
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    const guarded = this.#guarded;
    guarded.add(reject);
    p.then((value) => {
      guarded.delete(reject);
      resolve(value);
    }, (error: unknown) => {
      if (error instanceof ServerError || this.lost !== null) {
        guarded.delete(reject);
        reject(this.lost ?? error);
        return;
      }
      setTimeout(() => {
        guarded.delete(reject);
        reject(this.lost ?? error);
      }, 0);
    });
    return promise;
  }

  /** Guarded promises still pending (`guard`); 0 whenever no device work is awaited. */
  get guardedCount(): number {
    return this.#guarded.size;
  }

  /** Pins still held until their submission completes. */
  get pinnedCount(): number {
    return this.#pins.length;
  }

  /**
   * Keeps `memory` alive until submission `index` has completed.
   *
   * @param index The submission that uses it.
   * @param memory The pinned descriptor (already `pin()`ned by the caller).
   */
  pinUntil(index: number, memory: ManagedMemory): void {
    this.#pins.push({ index, memory });
  }

  /**
   * Records that every submission up to `index` has completed, releasing
   * their pins.
   *
   * @param index A submission index observed before a completed wait started.
   */
  completed(index: number): void {
    if (index > this.completedIndex) this.completedIndex = index;
    let n = 0;
    while (n < this.#pins.length && this.#pins[n]!.index <= this.completedIndex) {
      this.#pins[n]!.memory.unpin();
      n++;
    }
    if (n > 0) this.#pins.splice(0, n);
  }

  /** Releases every pin (device teardown). */
  releaseAllPins(): void {
    for (const p of this.#pins) p.memory.unpin();
    this.#pins.length = 0;
  }
}
