/**
 * `AnyClient`: what a `ComputeClient` and a `WorkerClient` have in common,
 * for code that works with either. A method whose worker form is
 * asynchronous returns `T | Promise<T>` here: `await` it.
 *
 * @module
 */

import type { Handle } from "../contract/handle.ts";
import type { Kernel } from "../contract/kernel.ts";
import type {
  MemoryAllocationMode,
  MemoryConfiguration,
  MemoryLayoutDescriptor,
  MemoryReport,
  MemoryUsage,
} from "../contract/memory_types.ts";
import type {
  CollectiveOptions,
  CubeCount,
  DeviceProperties,
  InfoWords,
  LaunchMode,
  ManagedResource,
  ProfileDuration,
} from "../contract/types.ts";
import type { ProfilingToken, StreamId } from "../ids.ts";
import type { HostData, ProfileOptions, ProfileResult, Tensor, TypedArrayType } from "./client_types.ts";
import type { Graph } from "./graph_handle.ts";
import type { AllReduceOptions } from "./collective_client.ts";
import type { LogicalDevice } from "../collective/device_ids.ts";
import type { JsonValue, TunableSet } from "../tune/tunable_set.ts";
import type { TuneOptions } from "../tune/tuner.ts";

/**
 * The methods both clients share, with the same semantics (see
 * `ComputeClient`; `WorkerClient` lists where it differs).
 *
 * @example A function that takes either client
 * ```ts
 * import { createClient } from "@denogpu/runtime";
 * import type { AnyClient } from "@denogpu/runtime/server";
 *
 * async function roundTrip(client: AnyClient): Promise<number[]> {
 *   using h = client.create(new Uint32Array([7, 8]));
 *   return [...await client.read(h, Uint32Array)];
 * }
 * await using a = await createClient();
 * await using b = await createClient({ worker: true });
 * console.log(await roundTrip(a), await roundTrip(b)); // [7, 8] [7, 8]
 * ```
 */
export interface AnyClient extends Disposable, AsyncDisposable {
  /** The stream every call targets. */
  readonly stream: StreamId;
  /** Device properties. */
  readonly properties: DeviceProperties;
  /** A client of the same device on another stream. */
  onStream(stream: StreamId): AnyClient;
  /** Whether reads map early (`createClient({ fastReads: true })`, verified at start). */
  readonly fastReads: boolean;
  /** The device's kind and logical index. */
  readonly deviceId: LogicalDevice;
  /** Allocates `size` bytes. */
  empty(size: number): Handle;
  /** Allocates an indirect workgroup count holding `[x, y, z]`. */
  createCount(x?: number, y?: number, z?: number): Handle;
  /** Allocates an indirect workgroup count with unspecified contents. */
  emptyCount(): Handle;
  /** Allocates memory holding a copy of `data`. */
  create(data: HostData): Handle;
  /** Overwrites a handle's memory. */
  write(handle: Handle, data: HostData): void;
  /** Reads a handle. */
  read<T = Uint8Array<ArrayBuffer>>(handle: Handle, type?: TypedArrayType<T>): Promise<T>;
  /** Reads several handles with one device wait. */
  readMany<T = Uint8Array<ArrayBuffer>>(handles: readonly Handle[], type?: TypedArrayType<T>): Promise<T[]>;
  /** Allocates a group of tensors in one reservation. */
  emptyTensors(descriptors: readonly MemoryLayoutDescriptor[]): Tensor[];
  /** Allocates a group of tensors and writes their data. */
  createTensors(entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[]): Tensor[];
  /** Reads a tensor. */
  readTensor<T = Uint8Array<ArrayBuffer>>(tensor: Tensor, type?: TypedArrayType<T>): Promise<T>;
  /** Lends reusable host memory for uploads. */
  staging(sizes: readonly number[]): Uint8Array[];
  /** Runs `fn` as a dry run. */
  dryRun<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Memory usage over every stream (a promise from a worker client). */
  memoryUsage(): MemoryUsage | Promise<MemoryUsage>;
  /** The pools of this stream (a promise from a worker client). */
  memoryReport(): MemoryReport | Promise<MemoryReport>;
  /** Frees every fully free page. */
  memoryCleanup(): void;
  /** Opens or closes a persistent allocation window. */
  allocationMode(mode: MemoryAllocationMode): void;
  /** The raw buffer range behind a handle (a worker client refuses it: GPU objects cannot cross threads). */
  getResource(handle: Handle): ManagedResource;
  /** Installs a pool layout (a promise from a worker client). */
  installMemoryPools(config: MemoryConfiguration): void | Promise<void>;
  /** Queues a kernel launch. */
  launch(
    kernel: Kernel,
    count: readonly number[] | Handle | CubeCount,
    buffers: readonly Handle[],
    info?: InfoWords,
    options?: { mode?: LaunchMode },
  ): void;
  /** Submits queued work and raises queued errors. */
  flush(): Promise<void>;
  /** Waits for the device, then raises queued errors. */
  sync(): Promise<void>;
  /** Runs `fn` with the device held. */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Opens a profile. */
  startProfile(): Promise<ProfilingToken>;
  /** Closes a profile. */
  endProfile(token: ProfilingToken): Promise<ProfileDuration>;
  /** Measures the device work `fn` queues. */
  profile<T>(fn: () => T | Promise<T>, options?: ProfileOptions): Promise<ProfileResult<T>>;
  /** Arms graph capture. */
  graphPrepare(): void;
  /** Starts recording. */
  beginCapture(): Promise<void>;
  /** Stops recording. */
  endCapture(): Promise<Graph>;
  /** Captures `fn` as a graph. */
  capture(fn: () => unknown): Promise<Graph>;
  /** Runs the fastest working candidate of `set` for `input`, tuning it on first use. */
  autotune<In, Out, K extends JsonValue>(set: TunableSet<In, Out, K>, input: In, options?: TuneOptions): Promise<Out>;
  /** Reduces `src` over `options.devices` into `dst`. */
  allReduce(src: Handle, dst: Handle, options: AllReduceOptions): Promise<void>;
  /** Waits for every collective this device called before it. */
  syncCollective(): Promise<void>;
  /** Sends a handle's bytes to another device. */
  send(handle: Handle, to: number | LogicalDevice, options?: CollectiveOptions): Promise<void>;
  /** Receives another device's bytes into a handle. */
  recv(handle: Handle, from: number | LogicalDevice, options?: CollectiveOptions): Promise<void>;
  /** Copies a handle to another client's device. */
  toClient(handle: Handle, other: { create(data: HostData): Handle }): Promise<Handle>;
  /** Destroys the device. */
  destroy(): void;
}
