/**
 * `MemoryClient`: the memory half of a client: allocations, uploads, reads
 * (as bytes or typed arrays), tensor groups, staging, and the stream's pools.
 * `ComputeClient` extends it with execution. The bodies of the data path live
 * in `_data.ts`.
 *
 * @module
 */

import { checkStreamId, type StreamId } from "../ids.ts";
import { combineUsage } from "../memory/memory_usage.ts";
import type { Handle } from "../contract/handle.ts";
import { checkHandle } from "../contract/handle_checks.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutDescriptor,
  MemoryReport,
  MemoryUsage,
} from "../contract/memory_types.ts";
import type { DeviceProperties, ManagedResource } from "../contract/types.ts";
import type { WebGpuServer } from "../server/webgpu_server.ts";
import {
  createCountOn,
  createOn,
  createTensorsOn,
  emptyCountOn,
  emptyOn,
  emptyTensorsOn,
  readManyOn,
  readTensorOn,
  writeOn,
} from "./_data.ts";
import type { HostData, Tensor, TypedArrayType } from "./client_types.ts";

/**
 * The memory half of a `ComputeClient` (which is what `createClient()`
 * returns): allocations, uploads, reads, tensor groups, staging memory and
 * the pools of one stream of one device.
 *
 * @example Upload, read back as a typed array, and look at the pools
 * ```ts
 * import { createClient, formatMemoryUsage } from "@denogpu/runtime";
 *
 * await using client = await createClient();
 * using h = client.create(new Uint32Array([1, 2, 3]));
 * console.log(await client.read(h, Uint32Array)); // Uint32Array(3) [1, 2, 3]
 * console.log(formatMemoryUsage(client.memoryUsage())); // "1 allocation, 12 B in use, ..."
 * ```
 */
export class MemoryClient {
  /** The server behind the client (shared by every client of `onStream`); see `@denogpu/runtime/server`. */
  readonly server: WebGpuServer;
  /** The stream every call of this client targets. */
  readonly stream: StreamId;

  /**
   * Internal: use `createClient()`.
   *
   * @param server The server.
   * @param stream The stream of this client.
   * @throws {RangeError} When the stream id is not a non-negative safe integer.
   */
  constructor(server: WebGpuServer, stream: StreamId = 0) {
    checkStreamId(stream, "ComputeClient");
    this.server = server;
    this.stream = stream;
  }

  /** Device properties: limits, features, identity (no round trip). */
  get properties(): DeviceProperties {
    return this.server.properties;
  }

  /**
   * True while fast reads are on: asked for with `createClient({ fastReads:
   * true })`, on a Deno where they were verified, with the start-up self-test
   * passed, and no early read failed since. When false, reads and syncs take
   * the spec path (each waits Deno's fixed 10 ms); `server.fastReadsReason`
   * says why.
   */
  get fastReads(): boolean {
    return this.server.fastReads;
  }

  /**
   * Allocates `size` bytes (0 is allowed). Contents are unspecified: a reused
   * slice keeps stale bytes.
   *
   * @param size Bytes.
   * @returns A handle owning one reference.
   * @throws {RangeError} When the size is not a non-negative integer.
   * @throws {ResourceLimitError} When it exceeds `maxBufferSize`.
   * @throws {IoError} When no pool can serve it.
   */
  empty(size: number): Handle {
    return emptyOn(this, size);
  }

  /**
   * Allocates memory holding a copy of `data`, visible to all later work.
   *
   * @param data The bytes (a lent staging view goes back to the pool).
   * @returns A handle owning one reference.
   * @throws {TypeError} When `data` is not an ArrayBuffer or a view, or is detached.
   */
  create(data: HostData): Handle {
    return createOn(this, data);
  }

  /**
   * Allocates an indirect workgroup count holding `[x, y, z]`, for
   * `launch(kernel, count, ...)`. Counts live on pages of their own, never
   * shared with a launch's storage bindings, so an indirect dispatch reads
   * them in place; write them with `write`, or from a kernel that binds the
   * count as storage (in a launch of its own).
   *
   * @param x Workgroups along x.
   * @param y Workgroups along y.
   * @param z Workgroups along z.
   * @returns A 12-byte handle owning one reference.
   * @throws {RangeError} When a count is not an integer in `[0, 2^32)`.
   * @throws {ResourceLimitError} When a count exceeds `maxComputeWorkgroupsPerDimension`
   * (WebGPU would skip the dispatch without an error); `write` into a count checks the same.
   */
  createCount(x = 1, y = 1, z = 1): Handle {
    return createCountOn(this, x, y, z);
  }

  /**
   * Allocates an indirect workgroup count with unspecified contents (a kernel
   * writes it); see `createCount`. A count a kernel writes is not checked:
   * WebGPU skips, without an error, an indirect dispatch whose count exceeds
   * `maxComputeWorkgroupsPerDimension`.
   *
   * @returns A 12-byte handle owning one reference.
   */
  emptyCount(): Handle {
    return emptyCountOn(this);
  }

  /**
   * Overwrites `handle`'s memory with `data`, ordered after every launch already queued.
   *
   * @param handle The destination.
   * @param data Exactly `handle.sizeInUse` bytes.
   * @throws {RangeError} When the byte length differs from `handle.sizeInUse`.
   */
  write(handle: Handle, data: HostData): void {
    writeOn(this, handle, data);
  }

  /**
   * Reads `handle`'s bytes, or its elements as `type`. Reads requested in the
   * same tick share one device wait.
   *
   * @param handle The memory.
   * @param type A typed array constructor, e.g. `Float32Array`; bytes when omitted.
   * @returns Exactly `sizeInUse` bytes; rejects with `ServerUnhealthyError` when the stream had queued errors.
   * @throws {RangeError} When the bytes are not a whole number of `type`'s elements (before anything is read).
   */
  async read<T = Uint8Array<ArrayBuffer>>(handle: Handle, type?: TypedArrayType<T>): Promise<T> {
    return (await readManyOn(this, [handle], type, "read"))[0]!;
  }

  /**
   * Reads several handles with one copy batch and one device wait.
   *
   * @param handles The memory.
   * @param type A typed array constructor for every result; bytes when omitted.
   * @returns Their contents, in order.
   */
  readMany<T = Uint8Array<ArrayBuffer>>(handles: readonly Handle[], type?: TypedArrayType<T>): Promise<T[]> {
    return readManyOn(this, handles, type);
  }

  /**
   * Allocates a group of tensors in one reservation, laid out contiguously at aligned offsets.
   *
   * @param descriptors Shape and element size of each tensor.
   * @returns One tensor per descriptor; release each handle when done.
   */
  emptyTensors(descriptors: readonly MemoryLayoutDescriptor[]): Tensor[] {
    return emptyTensorsOn(this, descriptors);
  }

  /**
   * Allocates a group of tensors in one reservation and writes each one's
   * data; every argument is checked before anything is allocated.
   *
   * @param entries Each tensor's descriptor and bytes (exactly `product(shape) × elemSize`).
   * @returns One tensor per entry.
   * @throws {RangeError} When a data length does not match its shape.
   */
  createTensors(entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[]): Tensor[] {
    return createTensorsOn(this, entries);
  }

  /**
   * Reads a tensor (contiguous strides only).
   *
   * @param tensor The tensor.
   * @param type A typed array constructor; bytes when omitted.
   * @returns Exactly `product(shape) × elemSize` bytes; rejects with `IoError` `unsupported-strides` for other strides.
   */
  readTensor<T = Uint8Array<ArrayBuffer>>(tensor: Tensor, type?: TypedArrayType<T>): Promise<T> {
    return readTensorOn(this, tensor, type);
  }

  /**
   * Lends reusable host memory for uploads: fill a view (all of it: its bytes
   * are unspecified) and pass it to `write` or `create`, which hands its
   * buffer back, so repeated uploads allocate nothing.
   *
   * @param sizes Bytes of each view.
   * @returns One view per size.
   * @throws {RangeError} {ResourceLimitError} For a size that is not a byte count, or above `maxBufferSize`.
   */
  staging(sizes: readonly number[]): Uint8Array[] {
    return this.server.staging(sizes, this.stream);
  }

  /**
   * Runs `fn` as a dry run: launches compile but dispatch nothing, and new
   * pages get no device memory until first used. Windows nest.
   *
   * @param fn The work to rehearse.
   * @returns What `fn` returns; rejects with `DeviceLostError` once the device is gone.
   */
  async dryRun<T>(fn: () => T | Promise<T>): Promise<T> {
    this.server.checkAlive();
    this.server.dryRunDepth(1);
    try {
      return await fn();
    } finally {
      this.server.dryRunDepth(-1);
    }
  }

  /**
   * Memory usage of the device.
   *
   * @returns Usage summed over every stream (see `formatMemoryUsage`).
   */
  memoryUsage(): MemoryUsage {
    return combineUsage(...this.server.streamIds().map((id) => this.server.memoryUsage(id)));
  }

  /**
   * The pools of this client's stream, in routing order, with their shapes and high-water marks.
   *
   * @returns The report (see `formatMemoryReport`).
   */
  memoryReport(): MemoryReport {
    return this.server.memoryReport(this.stream);
  }

  /** Frees every fully free page (and idle staging buffers) on every stream. */
  memoryCleanup(): void {
    for (const id of this.server.streamIds()) this.server.memoryCleanup(id);
  }

  /**
   * Opens (`persistent`) or closes (`auto`) a window whose allocations go to
   * the persistent pool (exact-size reuse, for weights); windows nest.
   *
   * @param mode The mode.
   */
  allocationMode(mode: MemoryAllocationMode): void {
    this.server.allocationMode(mode, this.stream);
  }

  /**
   * Installs a pool layout on this stream (only while nothing is live in its
   * pools) and for streams created later.
   *
   * @param config The layout.
   * @throws {InstallMemoryPoolsError} `pools-in-use`.
   * @throws {PoolConfigError} For an invalid layout.
   */
  installMemoryPools(config: MemoryConfiguration): void {
    this.server.installMemoryPools(config, this.stream);
  }

  /**
   * The raw `GPUBuffer` range behind a handle, for other WebGPU code on the
   * same device; queued work on it is submitted first.
   *
   * @param handle The memory.
   * @returns The range; `release()` it when done.
   */
  getResource(handle: Handle): ManagedResource {
    return this.server.getResource(checkHandle(this.server, handle, "getResource"), this.stream);
  }
}
