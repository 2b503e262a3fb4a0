/**
 * `ComputeStorage` over `GPUBuffer`s of one device (CubeCL's `WgpuStorage`).
 *
 * Destruction is deferred: WebGPU fails a `queue.submit` whose command buffer
 * references a destroyed buffer, so `dealloc` only queues a buffer, and `flush`
 * destroys the queue once the owning stream has no unsubmitted work (the stream
 * calls `flush` right after each submit).
 *
 * @module
 */

import { IoError, type ServerError } from "../errors.ts";
import { allocateStorageId } from "../ids.ts";
import type { ComputeStorage, StorageHandle } from "../contract/storage.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Options of a WebGPU storage. */
export interface WebGpuStorageOptions {
  /** The device that owns the buffers. */
  device: GPUDevice;
  /** `GPUBufferUsage` flags of every buffer. */
  usage: GPUBufferUsageFlags;
  /** Offset alignment, in bytes. */
  alignment: number;
  /** `maxBufferSize` of the device. */
  maxBufferSize: number;
  /** True when the owning stream has no unsubmitted work referencing its buffers. */
  isIdle: () => boolean;
  /** Receives allocation failures (out of memory) reported asynchronously by the device. */
  reportError: (error: ServerError) => void;
  /** Called with the id of every buffer destroyed, so caches can forget it. */
  onDestroy?: (id: number) => void;
}

/** Device buffers by id, with deferred destruction. */
export class WebGpuStorage implements ComputeStorage {
  /**
   * Fault injection for tests of the error paths: while `outOfMemory` is
   * above zero, each new buffer decrements it and is reported as if the device
   * had run out of memory (the buffer is still created, so the runtime's
   * bookkeeping stays consistent).
   */
  readonly faults: { outOfMemory: number } = { outOfMemory: 0 };
  #o: WebGpuStorageOptions;
  #pending: StorageHandle[] = [];
  #live = 0;
  #created = 0;

  /**
   * Creates the instance.
   *
   * @param options Device, usage, limits and callbacks.
   */
  constructor(options: WebGpuStorageOptions) {
    this.#o = options;
  }

  get alignment(): number {
    return this.#o.alignment;
  }

  get liveBuffers(): number {
    return this.#live;
  }

  get createdBuffers(): number {
    return this.#created;
  }

  alloc(size: number, label: string, lazy = false): StorageHandle {
    if (size > this.#o.maxBufferSize) {
      throw new IoError(
        "buffer-too-big",
        `${label}: ${formatBytesExact(size)} is above the device's maxBufferSize (${
          formatBytesExact(this.#o.maxBufferSize)
        })`,
        { size },
      );
    }
    const handle: StorageHandle & { label: string } = {
      id: allocateStorageId(),
      size,
      resource: null,
      label,
    };
    if (!lazy) this.#create(handle, label);
    return handle;
  }

  materialize(handle: StorageHandle): void {
    if (handle.resource !== null) return;
    try {
      this.#create(handle, (handle as { label?: string }).label ?? `buffer ${handle.id}`);
    } catch (cause) {
      throw new IoError(
        "storage-mapping-failed",
        `could not back lazy buffer ${handle.id} (${formatBytesExact(handle.size)}) with device memory`,
        { size: handle.size, cause },
      );
    }
  }

  #create(handle: StorageHandle, label: string): void {
    const device = this.#o.device;
    device.pushErrorScope("out-of-memory");
    handle.resource = device.createBuffer({
      label,
      size: Math.max(32, Math.ceil(handle.size / 4) * 4),
      usage: this.#o.usage,
    });
    this.#live++;
    this.#created++;
    const injected = this.faults.outOfMemory > 0;
    if (injected) this.faults.outOfMemory--;
    device.popErrorScope().then((error) => {
      if (error || injected) {
        this.#o.reportError(
          new IoError("out-of-memory", `${label}: the device is out of memory (${formatBytesExact(handle.size)})`, {
            size: handle.size,
            cause: error,
          }),
        );
      }
    }, () => {});
  }

  dealloc(handle: StorageHandle): void {
    this.#pending.push(handle);
  }

  flush(): void {
    if (this.#pending.length === 0 || !this.#o.isIdle()) return;
    // `writeBuffer`s still waiting for a submit may target these buffers: flush them to the queue first.
    this.#o.device.queue.submit([]);
    for (const h of this.#pending) if (this.#destroy(h)) this.#o.onDestroy?.(h.id);
    this.#pending.length = 0;
  }

  /** Destroys every buffer still queued, regardless of pending work (device teardown). */
  destroyAll(): void {
    for (const h of this.#pending) if (this.#destroy(h)) this.#o.onDestroy?.(h.id);
    this.#pending.length = 0;
  }

  /** Destroys a handle's buffer; false when it had none (lazy, or already destroyed). */
  #destroy(h: StorageHandle): boolean {
    if (h.resource === null) return false;
    h.resource.destroy();
    h.resource = null;
    this.#live--;
    return true;
  }
}
