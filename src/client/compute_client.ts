/**
 * `ComputeClient`: the door users hold, over a device link (`DeviceLink`):
 * the server in this process, or the connection to a server in a Worker.
 * It turns user forms (host data, handles, counts) into the contract's, owns
 * the handles' reference counts, and routes every call to its stream on the
 * link, where the arguments are checked by the contract's checks
 * (`src/contract/`), whichever entry a call comes through. The bodies of its
 * data, section and collective calls live in `_data.ts`, `_sections.ts` and
 * `_collectives.ts`.
 *
 * @module
 */

import type { ProfilingToken, StreamId } from "../ids.ts";
import { Handle } from "../contract/handle.ts";
import type { Kernel } from "../contract/kernel.ts";
import type { DeviceLink, LinkLauncher } from "../contract/device_link.ts";
import { badCountForm } from "../contract/launch_checks.ts";
import { checkHandle } from "../contract/handle_checks.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutDescriptor,
  MemoryReport,
  MemoryUsage,
} from "../contract/memory_types.ts";
import type {
  BufferBinding,
  CollectiveOptions,
  CubeCount,
  DeviceProperties,
  InfoWords,
  LaunchMode,
  ManagedResource,
  ProfileDuration,
} from "../contract/types.ts";
import { ServerError, UnsupportedError } from "../errors.ts";
import { checkStreamId } from "../ids.ts";
import { type LogicalDevice, toLogicalDevice } from "../collective/device_ids.ts";
import { WebGpuServer } from "../server/webgpu_server.ts";
import type { JsonValue, TunableSet } from "../tune/tunable_set.ts";
import type { TuneOptions } from "../tune/tuner.ts";
import type { TuneMeasurer } from "../tune/measurer.ts";
import { profileMeasurer } from "../tune/profile_measurer.ts";
import {
  asTyped,
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
import { flushOn, quiet, syncOn } from "./_waits.ts";
import { allReduceOn, recvOn, sendOn } from "./_collectives.ts";
import { captureSection, profileSection } from "./_sections.ts";
import type { AllReduceOptions, HostData, ProfileOptions, ProfileResult, Tensor, WaitOptions } from "./client_types.ts";
import type { ElementsOf, TypedArray, TypedArrayType } from "../contract/typed_arrays.ts";
import { Graph } from "./graph_handle.ts";
import { launchNamed, type NamedBuffers } from "./_named_buffers.ts";

/** Where a client's device runs: in this process, or in a Worker of its own. */
export type Transport = "in-process" | "worker";

/**
 * What a call that a Worker can only answer later returns: the value in
 * process, a promise of it through a Worker (`await` works on both).
 */
export type Answer<T extends Transport, V> = T extends "in-process" ? V : Promise<V>;

/**
 * The client of one device, bound to one stream: memory, transfers,
 * launches, synchronisation, profiles, graphs, autotune and collectives.
 * Make one with `createClient()`; `onStream(id)` gives a client of the same
 * device on another stream.
 *
 * The device runs in this process, or, with `createClient({ worker: true })`,
 * in a Worker of its own (a `WorkerClient`), whose device waits never block
 * this thread. Every method has the same semantics, ordering and errors on
 * both; what differs is a property of the transport:
 *
 * | call | in process | through a Worker |
 * |---|---|---|
 * | `memoryUsage()`, `memoryReport()` | the value | a promise (the pools live in the Worker) |
 * | `installMemoryPools(c)` | throws `pools-in-use` at once | a promise that rejects with it (a bad layout still throws at the call) |
 * | `endProfile(t)` | resolves at once; its ticks settle later | resolves once the ticks are known |
 * | `getResource(h)` | the `GPUBuffer` range | throws `UnsupportedError`: GPU objects cannot cross threads |
 * | `empty(n)` when no pool can serve it | throws `IoError` | the `IoError` is raised by the next `flush`, `sync` or `read` |
 * | `allReduce` | reduces on the host or the device | on the host: `reduceOn: "device"` is refused at the call |
 * | `server` | the `WebGpuServer` | throws `UnsupportedError`: the server is in the Worker |
 * | `createClient({ device })` | uses the caller's `GPUDevice` | refused: a `GPUDevice` cannot cross to the Worker (options must be plain data) |
 * | `fastReads` | as this thread's server decided at start | as the Worker's server decided at start |
 * | `autotune(set, input)` | tunes with the server's tuner | the tuner runs on this thread, timing with the worker client's profiles |
 * | `destroy()` | destroys the device | the Worker destroys it after the commands already queued, then closes (`ended`) |
 *
 * The type parameter says which: `ComputeClient` (in process) and
 * `WorkerClient` (`ComputeClient<"worker">`); code written for either takes a
 * `ComputeClient<Transport>` and awaits the calls of the first rows.
 *
 * A live worker client keeps the process alive: destroy it, or use `await using`.
 *
 * @example Write, launch, read
 * ```ts
 * import { createClient, defineKernel } from "@denogpu/runtime";
 *
 * await using client = await createClient();
 * const double = defineKernel({
 *   name: "double",
 *   wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *          @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] *= 2.0; }`,
 * });
 * using x = client.create(new Float32Array([1, 2, 3, 4]));
 * client.launch(double, [1], [x]);
 * console.log(await client.read(x, Float32Array)); // Float32Array(4) [2, 4, 6, 8]
 * ```
 */
export class ComputeClient<T extends Transport = "in-process"> implements Disposable, AsyncDisposable {
  /** @ignore The device link every call goes to (shared by the clients of every stream). */
  readonly link: DeviceLink;
  /** The stream every call of this client targets. */
  readonly stream: StreamId;
  /** The link's launch path, called directly: every argument is checked at its door. */
  #launch: LinkLauncher;
  /** Measures autotune rounds on this client's stream (made on first use). */
  #measurer: TuneMeasurer | null = null;
  /**
   * The array a launch by binding names fills in argument order, reused; it
   * keeps the last such launch's handles (objects only: their memory goes by
   * reference counts) until the next, or until the client goes.
   */
  #named: BufferBinding[] | null = [];

  /**
   * Internal: use `createClient()`.
   *
   * @param link The device link.
   * @param stream The stream of this client.
   * @throws {RangeError} When the stream id is not a non-negative safe integer.
   */
  constructor(link: DeviceLink, stream: StreamId = 0) {
    checkStreamId(stream, "ComputeClient");
    this.link = link;
    this.stream = stream;
    this.#launch = link.launchPath;
  }

  /**
   * The server behind the client (shared by every client of `onStream`); see `@denogpu/runtime/server`.
   *
   * @throws {UnsupportedError} For a client whose device lives in a Worker.
   */
  get server(): WebGpuServer {
    if (this.link instanceof WebGpuServer) return this.link;
    throw new UnsupportedError("server: a worker client's server lives in its Worker");
  }

  /** Device properties: limits, features, identity (no round trip). */
  get properties(): DeviceProperties {
    return this.link.properties;
  }

  /**
   * True while fast reads are on: asked for with `createClient({ fastReads:
   * true })`, on a Deno where they were verified, with the start-up self-test
   * passed, and no early read failed since. When false, reads and syncs take
   * the spec path (each waits Deno's fixed 10 ms); `server.fastReadsReason`
   * says why.
   */
  get fastReads(): boolean {
    return this.link.fastReads;
  }

  /** The device: its kind and its logical index (`createClient({ deviceIndex })`). */
  get deviceId(): LogicalDevice {
    return toLogicalDevice(this.link.deviceId);
  }

  /**
   * A client of the same device on another stream. Handles may be shared
   * between streams; the runtime keeps their ordering.
   *
   * @param stream The stream id.
   * @returns The client.
   * @throws {RangeError} When the id is not a non-negative safe integer.
   */
  onStream(stream: StreamId): ComputeClient<T> {
    return new ComputeClient<T>(this.link, stream);
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
   * Allocates memory holding a copy of `data`, visible to all later work. The
   * handle carries `data`'s element type: `create(new Float32Array(n))` gives
   * a `Handle<Float32Array>`, which `read` returns as a `Float32Array`; a
   * `Uint8Array`, `DataView` or `ArrayBuffer` gives bytes (`Handle`).
   *
   * @example A typed handle reads back as its type
   * ```ts
   * import { createClient } from "@denogpu/runtime";
   *
   * await using client = await createClient();
   * using h = client.create(new Int32Array([-1, 2, -3])); // Handle<Int32Array>
   * const values: Int32Array = await client.read(h); // no second argument
   * console.log(values); // Int32Array(3) [-1, 2, -3]
   * ```
   *
   * @param data The data (a lent staging view goes back to the pool).
   * @returns A handle owning one reference, of `data`'s element type.
   * @throws {TypeError} When `data` is not an ArrayBuffer or a view, or is detached.
   */
  create<D extends HostData>(data: D): Handle<ElementsOf<D>> {
    return createOn(this, data);
  }

  /**
   * Allocates an indirect workgroup count holding `[x, y, z]`, for
   * `launch(kernel, count, ...)`. Counts live on pages of their own, never
   * shared with a launch's storage bindings, so an indirect dispatch reads
   * them in place; write them with `write`, or from a kernel that binds the
   * count as storage (in a launch of its own). Any other handle holding three
   * u32 is a count too; one in the page of the launch's own bindings is first
   * copied by a one-invocation dispatch in the same compute pass.
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
   * Reads `handle`'s elements: as its own element type (`handle.elementType`:
   * a `Float32Array` for a handle made from one, bytes for `empty` memory),
   * or as `type` when given. Reads requested in the same tick share one
   * device wait.
   *
   * In TypeScript, a handle of bytes (`Handle`) reads as any type, and a
   * typed one (`Handle<Float32Array>`) as its own type or as bytes
   * (`Uint8Array`): another type is a type error. To reinterpret a typed
   * handle's bytes as another type, read it through its bytes type,
   * `client.read(h as Handle, Uint32Array)`; the result then is what the
   * explicit type says, at run time as in TypeScript. A handle typed as
   * `Handle` in TypeScript that was made from a typed array still reads, with
   * no `type`, as that typed array: pass `Uint8Array` for its bytes.
   *
   * @example Own type, explicit bytes, reinterpretation
   * ```ts
   * import { createClient, type Handle } from "@denogpu/runtime";
   *
   * await using client = await createClient();
   * using h = client.create(new Float32Array([1, -2])); // Handle<Float32Array>
   * console.log(await client.read(h)); // Float32Array(2) [1, -2]
   * console.log(await client.read(h, Uint8Array)); // Uint8Array(8) [0, 0, 128, 63, 0, 0, 0, 192]
   * console.log(await client.read(h as Handle, Uint32Array)); // Uint32Array(2) [1065353216, 3221225472]
   * ```
   *
   * `options.signal` abandons the wait, not the read: once it aborts, the
   * promise rejects with `signal.reason`, while the read, issued at the call,
   * runs on in order with the work around it and its bytes are dropped;
   * queued work still runs and the client stays usable. Queued errors the
   * abandoned read drains are raised by the next read, `sync` or `flush` on
   * this stream. A signal already aborted rejects at once and reads nothing.
   *
   * @example Abandon a read
   * ```ts
   * import { createClient } from "@denogpu/runtime";
   *
   * await using client = await createClient();
   * using x = client.create(new Float32Array([1, 2, 3]));
   * const controller = new AbortController();
   * const read = client.read(x, Float32Array, { signal: controller.signal });
   * controller.abort(new Error("no longer needed"));
   * await read.catch((e) => console.log(e.message)); // "no longer needed"
   * console.log(await client.read(x)); // Float32Array(3) [1, 2, 3]
   * ```
   *
   * @param handle The memory.
   * @param type A typed array constructor, e.g. `Float32Array`; the handle's own element type when omitted.
   * @param options `signal` abandons the wait (see above).
   * @returns Exactly `sizeInUse` bytes, as `type` or the handle's element type. Rejects with
   * `ServerUnhealthyError` when the stream had queued errors (or an abandoned read or sync on it drained
   * some), with `signal.reason` once the signal aborts, with `DeviceLostError` once the device is gone, and
   * with `TypeError` for a bad handle or options, before anything is read.
   * @throws {RangeError} When the bytes are not a whole number of elements of the type read (a view of a
   * typed handle may not be), before anything is read.
   */
  async read<
    E extends TypedArray = Uint8Array<ArrayBuffer>,
    U extends E | ([E] extends [Uint8Array] ? TypedArray : Uint8Array<ArrayBuffer>) = E,
  >(handle: Handle<E>, type?: TypedArrayType<U>, options?: WaitOptions): Promise<NoInfer<U>> {
    return (await readManyOn(this, [handle], type, "read", options))[0]!;
  }

  /**
   * Reads several handles with one copy batch and one device wait: each as
   * its own element type, or every one as `type` when given (see `read`).
   *
   * @example Each handle as its own type
   * ```ts
   * import { createClient } from "@denogpu/runtime";
   *
   * await using client = await createClient();
   * using a = client.create(new Float32Array([0.5]));
   * using b = client.create(new Uint16Array([7, 8]));
   * const [x, y] = await client.readMany([a, b]); // [Float32Array, Uint16Array]
   * console.log(x, y); // Float32Array(1) [0.5] Uint16Array(2) [7, 8]
   * ```
   *
   * @param handles The memory.
   * @param type A typed array constructor for every result; each handle's own element type when omitted.
   * In TypeScript it must suit the handles as `read`'s does (one of their types, or bytes).
   * @param options `signal` abandons the wait, not the reads, as in `read`.
   * @returns Their contents, in order. Rejects as `read` does.
   * @throws {RangeError} When a handle's bytes are not a whole number of elements of the type read,
   * before anything is read.
   */
  readMany<
    const H extends readonly Handle<TypedArray>[],
    U extends
      | (H[number] extends Handle<infer E> ? E : never)
      | ([H[number] extends Handle<infer E> ? E : never] extends [Uint8Array] ? TypedArray : Uint8Array<ArrayBuffer>) =
        never,
  >(
    handles: H,
    type?: TypedArrayType<U>,
    options?: WaitOptions,
  ): Promise<
    NoInfer<[U] extends [never] ? { -readonly [K in keyof H]: H[K] extends Handle<infer E> ? E : never } : U[]>
  > {
    return readManyOn(this, handles, type, "readMany", options) as never;
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
   * data; every argument is checked before anything is allocated. A tensor
   * keeps its `elemSize`, not the data's element type: its handle is bytes
   * (`Handle`), and `readTensor` returns bytes unless given a type.
   *
   * @param entries Each tensor's descriptor and bytes (exactly `product(shape) × elemSize`).
   * @returns One tensor per entry.
   * @throws {RangeError} When a data length does not match its shape.
   */
  createTensors(entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[]): Tensor[] {
    return createTensorsOn(this, entries);
  }

  /**
   * Reads a tensor (contiguous strides only). Tensor handles are bytes, so
   * with no `type` the result is bytes, whatever the data written.
   *
   * @param tensor The tensor.
   * @param type A typed array constructor; bytes when omitted.
   * @param options `signal` abandons the wait, not the read, as in `read`.
   * @returns Exactly `product(shape) × elemSize` bytes. Rejects with `IoError` `unsupported-strides` for other
   * strides, and otherwise as `read` does.
   */
  readTensor<T = Uint8Array<ArrayBuffer>>(
    tensor: Tensor,
    type?: TypedArrayType<T>,
    options?: WaitOptions,
  ): Promise<T> {
    return readTensorOn(this, tensor, type, options);
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
    return this.link.staging(sizes, this.stream);
  }

  /**
   * Runs `fn` as a dry run: launches compile but dispatch nothing, and new
   * pages get no device memory until first used. Windows nest.
   *
   * @param fn The work to rehearse.
   * @returns What `fn` returns; rejects with `DeviceLostError` once the device is gone.
   */
  async dryRun<T>(fn: () => T | Promise<T>): Promise<T> {
    this.link.checkAlive();
    this.link.dryRunDepth(1);
    try {
      return await fn();
    } finally {
      this.link.dryRunDepth(-1);
    }
  }

  /**
   * Memory usage of the device, summed over every stream.
   *
   * @returns The usage (see `formatMemoryUsage`); a promise through a Worker, whose pools live there.
   */
  memoryUsage(): Answer<T, MemoryUsage> {
    return this.link.deviceUsage() as Answer<T, MemoryUsage>;
  }

  /**
   * The pools of this client's stream, in routing order, with their shapes and high-water marks.
   *
   * @returns The report (see `formatMemoryReport`); a promise through a Worker, whose pools live there.
   */
  memoryReport(): Answer<T, MemoryReport> {
    return this.link.memoryReport(this.stream) as Answer<T, MemoryReport>;
  }

  /** Frees every fully free page (and idle staging buffers) on every stream. */
  memoryCleanup(): void {
    this.link.cleanup();
  }

  /**
   * Opens (`persistent`) or closes (`auto`) a window whose allocations go to
   * the persistent pool (exact-size reuse, for weights); windows nest.
   *
   * @param mode The mode.
   */
  allocationMode(mode: MemoryAllocationMode): void {
    this.link.allocationMode(mode, this.stream);
  }

  /**
   * Installs a pool layout on this stream (only while nothing is live in its
   * pools) and for streams created later.
   *
   * @param config The layout.
   * @returns Nothing in process, where it throws `pools-in-use` at once; a
   * promise through a Worker (only the Worker knows whether its pools hold live
   * memory), which rejects with it.
   * @throws {InstallMemoryPoolsError} `pools-in-use` (in process).
   * @throws {PoolConfigError} For an invalid layout.
   */
  installMemoryPools(config: MemoryConfiguration): Answer<T, void> {
    return this.link.installMemoryPools(config, this.stream) as Answer<T, void>;
  }

  /**
   * The raw `GPUBuffer` range behind a handle, for other WebGPU code on the
   * same device; queued work on it is submitted first.
   *
   * @param handle The memory.
   * @returns The range; `release()` it when done.
   * @throws {UnsupportedError} Through a Worker: GPU objects cannot cross threads.
   */
  getResource(handle: Handle): ManagedResource {
    return this.link.getResource(checkHandle(this.link.owner, handle, "getResource"), this.stream);
  }

  /**
   * Queues a kernel launch. Device-side failures are queued and raised by the
   * next `flush`, `sync` or `read`; argument errors throw here.
   *
   * The buffers are given in argument order (an array: the fast path), or by
   * the WGSL names of the bindings they take (an object): the names are
   * `kernel.layout.bindingNames`, which lists every binding the entry point
   * uses, the info binding included; when info words are given, the last name
   * takes them and is not among the buffers. A named launch is the positional
   * launch it maps to (graph capture records it so), and costs a walk over the
   * object's keys more (tens of nanoseconds at four buffers).
   *
   * @example Buffers by binding name
   * ```ts
   * import { createClient, defineKernel, packInfo } from "@denogpu/runtime";
   *
   * const axpy = defineKernel({
   *   name: "axpy",
   *   wgsl: `@group(0) @binding(0) var<storage, read> x: array<f32>;
   *          @group(0) @binding(1) var<storage, read_write> y: array<f32>;
   *          @group(0) @binding(2) var<uniform> a: f32;
   *          @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
   *            if (g.x < arrayLength(&y)) { y[g.x] += a * x[g.x]; }
   *          }`,
   * });
   * console.log(axpy.layout.bindingNames); // ["x", "y", "a"]: "a" takes the info words
   * await using client = await createClient();
   * using x = client.create(new Float32Array([1, 2, 3]));
   * using y = client.create(new Float32Array([10, 20, 30]));
   * client.launch(axpy, [1], { y, x }, packInfo({ f32: 2 }));
   * console.log(await client.read(y, Float32Array)); // Float32Array(3) [12, 24, 36]
   * ```
   *
   * @param kernel The kernel.
   * @param count Workgroups `[x, y?, z?]`, or a handle or view (or dynamic `CubeCount`) holding three u32, read
   * when the dispatch runs (see `createCount`).
   * @param buffers One handle per buffer the kernel binds: an array in `(group, binding)` order, or an
   * object keyed by the bindings' WGSL names (every buffer binding once, the info binding left out when
   * info words are given).
   * @param info Info words for the kernel's last binding (see `packInfo`).
   * @param options `{ mode: "skip" }` compiles and caches without dispatching.
   * @throws {TypeError} For a bad argument, before anything is queued: among others, buffers by a name
   * the kernel does not bind (or by the name taking the info words), a binding name with no buffer, or a
   * value that is not a `Handle`; each message names the kernel, the name and the kernel's binding names.
   * @throws {RangeError} {ResourceLimitError} For a bad count, view or size, before anything is queued.
   */
  launch(
    kernel: Kernel,
    count: readonly number[] | Handle | CubeCount,
    buffers: readonly Handle[] | Readonly<Record<string, Handle>>,
    info?: InfoWords,
    options?: { mode?: LaunchMode },
  ): void {
    // The count is taken apart inline: a shared helper filling a scratch object read 3-6% slower per launch
    // on the H200 (bench/RESULTS.md, run 31).
    let x = 1;
    let y = 1;
    let z = 1;
    let indirect: BufferBinding | null = null;
    if (Array.isArray(count)) {
      const n = count.length;
      if (n < 1 || n > 3) badCountForm(kernel, count);
      x = count[0]!;
      if (n > 1) {
        y = count[1]!;
        if (n > 2) z = count[2]!;
      }
    } else if (count instanceof Handle) {
      indirect = count;
    } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "static") {
      const c = count as { x: number; y: number; z: number };
      x = c.x;
      y = c.y;
      z = c.z;
    } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "dynamic") {
      indirect = (count as { binding: BufferBinding }).binding;
    } else {
      badCountForm(kernel, count);
    }
    // Every argument is checked once, at the link's door (contract/launch_checks.ts).
    const mode = options === undefined ? "execute" : options.mode ?? "execute";
    if (Array.isArray(buffers)) {
      this.#launch.launch(
        kernel,
        buffers as readonly Handle[],
        info ?? null,
        x,
        y,
        z,
        indirect,
        mode,
        this.stream,
        false,
      );
    } else {
      // Taken while in use: a launch made while it is filled (a getter among the buffers) gets an array of
      // its own, and one that throws leaves the next to make a new one.
      const scratch = this.#named ?? [];
      this.#named = null;
      const named = buffers as NamedBuffers;
      launchNamed(this.#launch, scratch, kernel, named, info ?? null, x, y, z, indirect, mode, this.stream);
      this.#named = scratch;
    }
  }

  /**
   * Submits queued work and raises queued errors, without waiting for the device.
   *
   * @returns Rejects with `ServerUnhealthyError` when errors were queued, or an abandoned read or sync on this
   * stream drained some (see `read`).
   */
  flush(): Promise<void> {
    return quiet() ? this.link.flush(this.stream) : flushOn(this);
  }

  /**
   * Waits until the device has run everything submitted, then raises queued errors.
   *
   * `options.signal` abandons the wait, not the sync: once it aborts, the
   * promise rejects with `signal.reason`, while the sync, issued at the call,
   * runs on; queued work still runs and the client stays usable. Queued
   * errors it drains are raised by the next read, `sync` or `flush` on this
   * stream. A signal already aborted rejects at once and issues nothing.
   *
   * @param options `signal` abandons the wait.
   * @returns Rejects with `ServerUnhealthyError` when errors were queued (or an abandoned read or sync on this
   * stream drained some), with `signal.reason` once the signal aborts, with `DeviceLostError` once the device is
   * gone, and with `TypeError` for bad options.
   */
  async sync(options?: WaitOptions): Promise<void> {
    await (options === undefined && quiet() ? this.link.sync(this.stream) : syncOn(this, options));
    this.link.profileSummary();
  }

  /**
   * Runs `fn` with the device held: other sections and profiles wait; nested
   * calls run at once. An exception in `fn` becomes a `ServerError` naming it.
   *
   * @param fn The section.
   * @returns What `fn` returns; rejects with `DeviceLostError`, without running `fn`, once the device is gone.
   */
  async exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await this.link.exclusive(fn);
    } catch (e) {
      if (e instanceof ServerError) throw e;
      const message = e instanceof Error ? e.message : String(e);
      throw new ServerError(`exclusive: the section threw: ${message}`, { cause: e });
    }
  }

  /**
   * Opens a profile on this stream; `profile()` is the usual way.
   *
   * @returns A token for `endProfile`.
   */
  startProfile(): Promise<ProfilingToken> {
    return this.link.startProfile(this.stream);
  }

  /**
   * Closes a profile opened by `startProfile`.
   *
   * @param token The token.
   * @returns The duration (through a Worker, once its ticks are known); rejects with `ProfileError` for an unknown or ended token.
   */
  endProfile(token: ProfilingToken): Promise<ProfileDuration> {
    return this.link.endProfile(this.stream, token);
  }

  /**
   * Runs `fn` and measures the device work it queues on this stream: with
   * `timestamp-query` each dispatch's device time and a per-kernel summary.
   * Runs as an exclusive section; profiles nest.
   *
   * @param fn The work to measure.
   * @param options `trace` writes a Chrome trace (Perfetto) of the dispatches.
   * @returns The result and the measurements.
   * @throws {ProfileError} When errors were drained while the profile was open.
   * @throws {TraceWriteError} When the trace could not be written, after `fn` ran.
   */
  profile<T>(fn: () => T | Promise<T>, options: ProfileOptions = {}): Promise<ProfileResult<T>> {
    return profileSection(this.link, this.stream, fn, options);
  }

  /**
   * Arms graph capture: what runs next is the warm-up (executed; it may read),
   * and its allocations go to the persistent pool.
   *
   * @throws {GraphStateError} When already armed or recording, or inside a dry run.
   */
  graphPrepare(): void {
    this.link.graphPrepare(this.stream);
  }

  /**
   * Starts recording after a warm-up: launches from now on are recorded, not executed.
   *
   * @returns Resolves once recording has started; rejects with the warm-up's queued errors.
   */
  beginCapture(): Promise<void> {
    return this.link.beginCapture(this.stream);
  }

  /**
   * Stops recording.
   *
   * @returns The graph recorded since `beginCapture`.
   */
  async endCapture(): Promise<Graph> {
    return new Graph(this.link, this.stream, await this.link.endCapture(this.stream, false));
  }

  /**
   * Captures `fn` as a graph: runs it once as a warm-up, then again while
   * recording. The graph keeps every buffer it recorded until destroyed.
   *
   * @param fn The work to capture: it must launch the same kernels, with the
   * same counts and argument counts, both times (the graph replays the second
   * run); otherwise the capture fails with `GraphStateError` naming the first
   * difference, and no graph is stored.
   * @returns The graph; `replay()` it, and `destroy()` it when done.
   */
  async capture(fn: () => unknown): Promise<Graph> {
    return new Graph(this.link, this.stream, await captureSection(this.link, this.stream, fn));
  }

  /**
   * Runs the fastest working candidate of `set` for `input` and returns what
   * its `run` returned. The first call for a key measures the candidates on
   * this stream (every candidate's samples of a round share one device wait),
   * unless the device's `tuneCache` already holds a decision made with the
   * same candidates and sources; later calls run the winner only. Concurrent
   * calls for a key share one tuning.
   *
   * @param set The candidates (`defineTunableSet`).
   * @param input The operation's input; `set.key(input)` names the decision.
   * @param options `signal` cancels the wait; `onProgress` receives the tuning's progress.
   * @returns What the chosen candidate returned.
   * @throws {AutotuneError} When no candidate works, listing each one's failure.
   */
  autotune<In, Out, K extends JsonValue>(
    set: TunableSet<In, Out, K>,
    input: In,
    options: TuneOptions = {},
  ): Promise<Out> {
    this.#measurer ??= profileMeasurer(this);
    return this.link.tuner.tune(set, input, { ...options, measurer: this.#measurer }) as Promise<Out>;
  }

  /**
   * Reduces `src` over every device of `devices` into `dst` (CubeCL's
   * `all_reduce`). Every participant makes the same call: the sorted set
   * names the communicator, and each device's `n`-th collective on it joins
   * slot `n`. The source is read as the work queued before the call left it;
   * `dst` holds the result once the returned promise resolves (work issued
   * after that, or after `syncCollective()`, sees it). Until then, leave
   * `dst` alone. Like a `read`, reading the source raises the errors queued
   * on the stream before the call: the collective then fails with
   * `device-error`, their `ServerUnhealthyError` as its cause.
   *
   * Collectives are queued, not awaited: each call returns at once with a
   * promise (marked handled, so ignoring it is safe), and `syncCollective()`
   * waits for every collective this device called before it. In one thread,
   * make every device's calls first and await afterwards: a device's
   * collective completes only once every participant has called it.
   *
   * @example All-reduce over two devices in one thread
   * ```ts
   * import { closeDevices, createClient } from "@denogpu/runtime";
   *
   * const clients = [await createClient({ deviceIndex: 0 }), await createClient({ deviceIndex: 1 })];
   * const xs = clients.map((c, i) => c.create(new Float32Array([i + 1, 10 * (i + 1)])));
   * clients.forEach((c, i) => c.allReduce(xs[i]!, xs[i]!, { dtype: "f32", op: "sum", devices: [0, 1] }));
   * await Promise.all(clients.map((c) => c.syncCollective()));
   * console.log(await clients[1]!.read(xs[1]!, Float32Array)); // Float32Array(2) [3, 30]
   * await closeDevices();
   * ```
   *
   * @param src The memory reduced.
   * @param dst Where the result goes, as long as `src` (may be `src`).
   * @param options Element type, reduction, participants; timeout, abort signal, where to reduce.
   * @returns Resolves once `dst` holds the result; rejects with `CollectiveError` (also reported by `syncCollective`).
   * @throws {TypeError} {RangeError} For a bad handle, element type, reduction or size, or a device named twice
   * in `devices`, before anything is queued.
   * @throws {CollectiveError} `unknown-device` or `not-a-participant`, at once.
   */
  allReduce(src: Handle, dst: Handle, options: AllReduceOptions): Promise<void> {
    return allReduceOn(this, src, dst, options);
  }

  /**
   * Waits for every collective this device called before it (all-reduces,
   * sends, receives); work issued after it resolves sees their results
   * (CubeCL's `sync_collective`).
   *
   * @returns Rejects with the earliest `CollectiveError` not yet reported by a `syncCollective`.
   */
  syncCollective(): Promise<void> {
    return this.link.syncCollective(this.stream);
  }

  /**
   * Sends `handle`'s bytes to device `to`, which takes them with `recv` (its
   * `n`-th receive from this device meets this device's `n`-th send to it).
   *
   * @param handle The memory sent, read as the work queued before the call left it.
   * @param to The receiving device: a logical index or `{ kind, index }`.
   * @param options Timeout and abort signal.
   * @returns Resolves once the receiver has written the bytes; rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} {CollectiveError} For a bad handle or device, at once.
   */
  send(handle: Handle, to: number | LogicalDevice, options: CollectiveOptions = {}): Promise<void> {
    return sendOn(this, handle, to, options);
  }

  /**
   * Receives the bytes device `from` sends into `handle`, which must be as
   * long as what is sent.
   *
   * @param handle Where the bytes go; leave it alone until the promise resolves.
   * @param from The sending device: a logical index or `{ kind, index }`.
   * @param options Timeout and abort signal.
   * @returns Resolves once the bytes are written (work issued after it sees them); rejects with `CollectiveError`.
   * @throws {TypeError} {RangeError} {CollectiveError} For a bad handle or device, at once.
   */
  recv(handle: Handle, from: number | LogicalDevice, options: CollectiveOptions = {}): Promise<void> {
    return recvOn(this, handle, from, options);
  }

  /**
   * Copies `handle` to another client's device through the host (CubeCL's
   * `to_client`): read here, then written there in chunks of a few MiB.
   *
   * @example Copy between two devices
   * ```ts
   * import { closeDevices, createClient } from "@denogpu/runtime";
   *
   * const a = await createClient({ deviceIndex: 0 });
   * const b = await createClient({ deviceIndex: 1 });
   * const x = a.create(new Float32Array([0, 1, 2, 3, 4, 5]));
   * const y = await a.toClient(x, b);
   * console.log(await b.read(y, Float32Array)); // Float32Array(6) [0, 1, 2, 3, 4, 5]
   * await closeDevices();
   * ```
   *
   * @param handle The memory, read as the work queued before the call left it.
   * @param other The client receiving the copy: of any device, this one
   * included, or any client with `create` (a client hosted in a Worker).
   * @returns A new handle of `other` holding the bytes, of the same element type when `other` is a
   * `ComputeClient` (bytes for a view that is not a whole number of its elements); work issued on it
   * afterwards sees them.
   */
  async toClient<E extends TypedArray>(
    handle: Handle<E>,
    other: { create(data: HostData): Handle<TypedArray> },
  ): Promise<Handle<E>> {
    if (typeof other?.create !== "function") throw new TypeError("toClient: other must be a client");
    const h = checkHandle(this.link.owner, handle, "toClient");
    const bytes = await this.read(h, Uint8Array);
    // Handed over as the handle's element type, so that `other.create` gives the copy the same one.
    const type = h.elementType;
    const size = type.BYTES_PER_ELEMENT;
    return other.create(bytes.byteLength % size === 0 ? asTyped(bytes, type, size) : bytes) as Handle<E>;
  }

  /**
   * Submits queued work and destroys the device the client created (a device
   * passed in with `createClient({ device })` stays usable). Later calls
   * throw, and pending calls reject with, `DeviceLostError`. Through a
   * Worker, the device is destroyed there after the commands already queued,
   * then the Worker closes itself (`ended` resolves then); the process waits
   * for its thread at its end.
   *
   * The client's buffers are freed at once, but the driver's own memory for a
   * device (about 200 MiB on an NVIDIA H100) goes back only when Deno's
   * `GPUDevice` object is garbage-collected (a Worker's, when the Worker
   * ends): keep one client for the process's work rather than one per task.
   */
  destroy(): void {
    this.link.destroy();
  }

  /** Resolves once the device is destroyed (through a Worker: once the Worker has destroyed it and closed itself). */
  get ended(): Promise<void> {
    return this.link.ended;
  }

  /** Same as `destroy()`, so `using client = await createClient()` works (queued work is not waited for). */
  [Symbol.dispose](): void {
    this.destroy();
  }

  /**
   * Waits for the work queued on this stream, then destroys the device even
   * when the wait rejects, so `await using` ends its scope with the work done.
   *
   * @returns Rejects with what `sync()` rejected with.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      if (!this.link.closed) await this.sync();
    } finally {
      this.destroy();
      await this.ended;
    }
  }
}
