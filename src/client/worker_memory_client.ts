/**
 * `WorkerMemoryClient`: the memory half of a `WorkerClient`, the client whose
 * server lives in a Worker. Allocations, uploads, reads, tensor groups and
 * staging keep `MemoryClient`'s semantics and argument checks (made here, on
 * the main thread, so a bad argument throws at the call); the memory reports
 * and `installMemoryPools` are asynchronous, and `getResource` is refused
 * (GPU objects cannot cross threads). `WorkerClient` extends it.
 *
 * @module
 */

import type { Handle } from "../contract/handle.ts";
import { checkCountWords, checkHandle, checkSize, checkStagingSizes } from "../contract/handle_checks.ts";
import { checkDescriptor } from "../contract/descriptors.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutDescriptor,
  MemoryReport,
  MemoryUsage,
} from "../contract/memory_types.ts";
import type { DeviceProperties, ManagedResource } from "../contract/types.ts";
import { UnsupportedError } from "../errors.ts";
import { checkStreamId, type StreamId } from "../ids.ts";
import { resolveMemoryConfiguration } from "../memory/memory_config.ts";
import type { WorkerConnection } from "../worker/connection.ts";
import { bytesOf, wireDescriptor, type WorkerDevice } from "../worker/worker_device.ts";
import { asTyped, countBytes, elementSize } from "./_data.ts";
import { allocTensors, checkTensorEntries, planTensors, type TensorPlanner } from "./_tensors.ts";
import { type HostData, type Tensor, toBytes, type TypedArrayType } from "./client_types.ts";
import { describe } from "../_util/describe.ts";

/**
 * The memory half of a `WorkerClient`: allocations, uploads, reads, tensor
 * groups, staging and pools of one stream of a device held by a Worker.
 *
 * @example Upload, read back, and ask the worker for its pools
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 *
 * await using client = await createClient({ worker: true });
 * using h = client.create(new Uint32Array([1, 2, 3]));
 * console.log(await client.read(h, Uint32Array)); // Uint32Array(3) [1, 2, 3]
 * console.log((await client.memoryUsage()).numberAllocs); // 1
 * ```
 */
export class WorkerMemoryClient {
  /** The stream every call of this client targets. */
  readonly stream: StreamId;
  #device: WorkerDevice;
  #conn: WorkerConnection;
  #planner: TensorPlanner;

  /**
   * Internal: use `createClient({ worker: true })`.
   *
   * @ignore
   * @param device The device held by the worker.
   * @param stream The stream of this client.
   */
  constructor(device: WorkerDevice, stream: StreamId = 0) {
    checkStreamId(stream, "WorkerClient");
    this.#device = device;
    const connection = this.#conn = device.connection;
    this.stream = stream;
    const policy = { layoutPolicy: connection.layoutPolicy };
    this.#planner = { utilities: () => policy, properties: connection.properties };
  }

  /** @ignore The main thread's side of the device (shared by the clients of every stream). */
  get device(): WorkerDevice {
    return this.#device;
  }

  /** @ignore The connection to the worker (shared by the clients of every stream). */
  get connection(): WorkerConnection {
    return this.#conn;
  }

  /** Device properties: limits, features, identity (no round trip). */
  get properties(): DeviceProperties {
    return this.#conn.properties;
  }

  /**
   * True while the worker's reads, syncs and profile read-backs map early
   * (see `MemoryClient.fastReads`): decided when the worker's server started.
   */
  get fastReads(): boolean {
    return this.#conn.fastReads;
  }

  /**
   * Allocates `size` bytes (see `MemoryClient.empty`). A pool that cannot
   * serve it is found in the worker: that `IoError` is queued on the stream
   * and raised by the next draining call, and the handle holds nothing.
   *
   * @param size Bytes.
   * @returns A handle owning one reference.
   * @throws {RangeError} When the size is not a non-negative integer.
   * @throws {ResourceLimitError} When it exceeds `maxBufferSize`.
   */
  empty(size: number): Handle {
    this.#conn.checkAlive();
    checkSize(this.#conn, size, "empty");
    return this.#conn.alloc(size, this.stream);
  }

  /**
   * Allocates an indirect workgroup count holding `[x, y, z]` on the count
   * pool (see `MemoryClient.createCount`).
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
    const bytes = countBytes(x, y, z);
    checkCountWords(bytes, this.#conn.properties.hardware.maxCubeCount[0], "createCount");
    const h = this.emptyCount();
    this.#conn.write(h, bytes, this.stream);
    return h;
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
    this.#conn.checkAlive();
    return this.#conn.alloc(12, this.stream, "count");
  }

  /**
   * Allocates memory holding a copy of `data` (see `MemoryClient.create`).
   *
   * @param data The bytes (a lent staging view moves to the worker and back to the pool).
   * @returns A handle owning one reference.
   * @throws {TypeError} When `data` is not an ArrayBuffer or a view, or is detached.
   */
  create(data: HostData): Handle {
    const bytes = toBytes(data, "create");
    const h = this.empty(bytes.byteLength);
    this.#conn.write(h, bytes, this.stream);
    return h;
  }

  /**
   * Overwrites `handle`'s memory with `data`, ordered after every launch already queued.
   *
   * @param handle The destination.
   * @param data Exactly `handle.sizeInUse` bytes.
   * @throws {RangeError} When the byte length differs from `handle.sizeInUse`.
   */
  write(handle: Handle, data: HostData): void {
    this.#conn.checkAlive();
    const h = checkHandle(this.#conn, handle, "write");
    const bytes = toBytes(data, "write");
    if (bytes.byteLength !== h.sizeInUse) {
      throw new RangeError(`write: ${bytes.byteLength} B given for memory ${h.memory.id} of ${h.sizeInUse} B`);
    }
    if (h.memory.count && h.offsetStart === 0) {
      checkCountWords(bytes, this.#conn.properties.hardware.maxCubeCount[0], "write (an indirect count)");
    }
    this.#conn.write(h, bytes, this.stream);
  }

  /**
   * Reads `handle`'s bytes, or its elements as `type` (see `MemoryClient.read`).
   *
   * @param handle The memory.
   * @param type A typed array constructor, e.g. `Float32Array`; bytes when omitted.
   * @returns Exactly `sizeInUse` bytes, moved from the worker (not copied).
   */
  async read<T = Uint8Array<ArrayBuffer>>(handle: Handle, type?: TypedArrayType<T>): Promise<T> {
    return (await this.#readMany([handle], type, "read"))[0]!;
  }

  /**
   * Reads several handles with one copy batch and one device wait.
   *
   * @param handles The memory.
   * @param type A typed array constructor for every result; bytes when omitted.
   * @returns Their contents, in order.
   */
  readMany<T = Uint8Array<ArrayBuffer>>(handles: readonly Handle[], type?: TypedArrayType<T>): Promise<T[]> {
    return this.#readMany(handles, type, "readMany");
  }

  #readMany<T>(
    handles: readonly Handle[],
    type: TypedArrayType<T> | undefined,
    call: "read" | "readMany",
  ): Promise<T[]> {
    try {
      if (!Array.isArray(handles)) throw new TypeError("readMany: handles must be an array of Handle");
      let size = 1;
      const descriptors = handles.map((given, i) => {
        const where = call === "read" ? "read" : `readMany[${i}]`;
        const h = checkHandle(this.#conn, given, where);
        size = elementSize(type, h.sizeInUse, where);
        return wireDescriptor(h.copyDescriptor([h.sizeInUse], [1], 1));
      });
      return this.#conn.call({ method: "read", stream: this.stream, descriptors })
        .then((out) => bytesOf(out).map((b) => asTyped(b, type, size)));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Allocates a group of tensors in one reservation (see `MemoryClient.emptyTensors`).
   *
   * @param descriptors Shape and element size of each tensor.
   * @returns One tensor per descriptor; release each handle when done.
   */
  emptyTensors(descriptors: readonly MemoryLayoutDescriptor[]): Tensor[] {
    this.#conn.checkAlive();
    if (!Array.isArray(descriptors)) throw new TypeError("emptyTensors: descriptors must be an array");
    const plan = planTensors(this.#planner, descriptors, "emptyTensors");
    return allocTensors((size) => this.empty(size), descriptors, plan);
  }

  /**
   * Allocates a group of tensors in one reservation and writes each one's data.
   *
   * @param entries Each tensor's descriptor and bytes (exactly `product(shape) × elemSize`).
   * @returns One tensor per entry.
   * @throws {RangeError} When a data length does not match its shape.
   */
  createTensors(entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[]): Tensor[] {
    this.#conn.checkAlive();
    const { bytes, descriptors, plan } = checkTensorEntries(this.#planner, entries);
    const tensors = allocTensors((size) => this.empty(size), descriptors, plan);
    // Entries may share one staging view's buffer: every write copies, then the views go back.
    bytes.forEach((b, i) => this.#conn.write(tensors[i]!.handle, b, this.stream, false));
    for (const b of bytes) this.#conn.staging.recycle(b); // only views it lent
    return tensors;
  }

  /**
   * Reads a tensor (contiguous strides only).
   *
   * @param tensor The tensor.
   * @param type A typed array constructor; bytes when omitted.
   * @returns Exactly `product(shape) × elemSize` bytes; rejects with `IoError` `unsupported-strides` for other strides.
   */
  readTensor<T = Uint8Array<ArrayBuffer>>(tensor: Tensor, type?: TypedArrayType<T>): Promise<T> {
    try {
      const h = checkHandle(this.#conn, tensor?.handle, "readTensor");
      const d = h.copyDescriptor(tensor.shape, tensor.strides, tensor.elemSize);
      const size = elementSize(type, checkDescriptor(d, "readTensor"), "readTensor");
      return this.#conn.call({ method: "read", stream: this.stream, descriptors: [wireDescriptor(d)] })
        .then((out) => asTyped(bytesOf(out)[0]!, type, size));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Lends reusable host memory for uploads (see `MemoryClient.staging`):
   * writing a view moves its buffer to the worker, which hands it back.
   *
   * @param sizes Bytes of each view.
   * @returns One view per size.
   * @throws {RangeError} {ResourceLimitError} For a size that is not a byte count, or above `maxBufferSize`.
   */
  staging(sizes: readonly number[]): Uint8Array[] {
    this.#conn.checkAlive();
    return this.#conn.staging.lend(checkStagingSizes(sizes, this.#conn.properties.memory.maxBufferSize));
  }

  /**
   * Runs `fn` as a dry run (see `MemoryClient.dryRun`).
   *
   * @param fn The work to rehearse.
   * @returns What `fn` returns; rejects with `DeviceLostError` once the device is gone.
   */
  async dryRun<T>(fn: () => T | Promise<T>): Promise<T> {
    this.#conn.checkAlive();
    this.#conn.dryRun(1);
    try {
      return await fn();
    } finally {
      this.#conn.dryRun(-1);
    }
  }

  /**
   * Memory usage of the device, summed over every stream (asynchronous: the pools live in the worker).
   *
   * @returns The usage, in ring order after every call made before.
   */
  memoryUsage(): Promise<MemoryUsage> {
    return this.#conn.call({ method: "memoryUsage" }) as Promise<MemoryUsage>;
  }

  /**
   * The pools of this client's stream (asynchronous: the pools live in the worker).
   *
   * @returns The report (see `formatMemoryReport`).
   */
  memoryReport(): Promise<MemoryReport> {
    return this.#conn.call({ method: "memoryReport", stream: this.stream }) as Promise<MemoryReport>;
  }

  /** Frees every fully free page (and idle staging buffers) on every stream, in ring order. */
  memoryCleanup(): void {
    this.#conn.checkAlive();
    this.#conn.memoryCleanup();
  }

  /**
   * Opens (`persistent`) or closes (`auto`) a persistent allocation window.
   *
   * @param mode The mode.
   * @throws {TypeError} For a mode other than `auto` or `persistent`.
   */
  allocationMode(mode: MemoryAllocationMode): void {
    this.#conn.checkAlive();
    if (mode !== "auto" && mode !== "persistent") {
      throw new TypeError(`allocationMode: mode must be "auto" or "persistent", got ${describe(mode)}`);
    }
    this.#conn.allocationMode(mode, this.stream);
  }

  /**
   * Installs a pool layout on this stream (asynchronous: only the worker
   * knows whether its pools hold live memory). The layout is checked here.
   *
   * @param config The layout.
   * @returns Rejects with `InstallMemoryPoolsError` `pools-in-use`.
   * @throws {PoolConfigError} For an invalid layout, at the call.
   */
  installMemoryPools(config: MemoryConfiguration): Promise<void> {
    this.#conn.checkAlive();
    resolveMemoryConfiguration(config, this.#conn.properties.memory);
    return this.#conn.call({ method: "installMemoryPools", stream: this.stream, config }) as Promise<void>;
  }

  /**
   * Refused: the `GPUBuffer` behind a handle lives in the worker, and GPU
   * objects cannot cross threads. Use a main-thread client (`createClient()`)
   * for interop with other WebGPU code.
   *
   * @param handle The memory.
   * @returns Never.
   * @throws {UnsupportedError} Always (after the handle's own checks).
   */
  getResource(handle: Handle): ManagedResource {
    checkHandle(this.#conn, handle, "getResource");
    this.#conn.checkAlive();
    throw new UnsupportedError(
      "getResource: a worker client's buffers live in its Worker and GPU objects cannot cross threads; use createClient() without worker for interop",
    );
  }
}
