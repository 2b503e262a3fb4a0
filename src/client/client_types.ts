/**
 * Types of the client API, and the host-bytes helper.
 *
 * @module
 */

import type { KernelSummary } from "../profile/trace.ts";
import type { Handle } from "../contract/handle.ts";
import type {
  CollectiveOptions,
  CubeCount,
  ElemType,
  LaunchMode,
  ProfileDuration,
  ProfileTicks,
  ReduceOperation,
} from "../contract/types.ts";
import type { LogicalDevice } from "../collective/device_ids.ts";
import type { DispatchTiming } from "../contract/types.ts";

export type { ElementsOf, TypedArray, TypedArrayType } from "../contract/typed_arrays.ts";

/** Host bytes accepted by `create` and `write`. */
export type HostData = ArrayBufferView | ArrayBuffer;

/** A launch's workgroup count: `[x, y?, z?]`, a `CubeCount`, or a handle holding three u32 (indirect). */
export type LaunchCount = readonly number[] | CubeCount | Handle;

/** A tensor: memory plus its shape and strides (CubeCL's `MemoryLayout`). */
export interface Tensor {
  /** The memory; release it when done. */
  readonly handle: Handle;
  /** Extent of each dimension, in elements. */
  readonly shape: readonly number[];
  /** Stride of each dimension, in elements. */
  readonly strides: readonly number[];
  /** Bytes per element. */
  readonly elemSize: number;
}

/** What `profile()` measured. */
export interface ProfileResult<T> {
  /** What the profiled function returned. */
  readonly result: T;
  /** The duration as `endProfile` returned it. */
  readonly duration: ProfileDuration;
  /** Start and end, in nanoseconds. */
  readonly ticks: ProfileTicks;
  /** `ticks.end - ticks.start`, in nanoseconds. */
  readonly nanos: number;
  /** Each dispatch's device time (device timing only). */
  readonly dispatches: readonly DispatchTiming[];
  /** Device time per kernel, longest first. */
  readonly kernels: readonly KernelSummary[];
}

/** Options of `profile()`. */
export interface ProfileOptions {
  /** Write a Chrome trace (Perfetto) of the dispatches to this file. */
  trace?: string | URL;
}

/**
 * Options of a call that waits for the device: `read`, `readMany`,
 * `readTensor` and `sync`.
 */
export interface WaitOptions {
  /**
   * Abandons the wait: once it aborts, the call's promise rejects with
   * `signal.reason`. Only the wait is abandoned: the read or sync was issued
   * at the call and runs on, in order with the work around it, and its
   * result is dropped when it comes. Queued errors it drains
   * (`ServerUnhealthyError`) are not lost: the next `read`, `readMany`,
   * `readTensor`, `sync` or `flush` on that stream rejects with them (unless
   * a read that shared its device wait already did). A signal already
   * aborted at the call rejects at once, after the arguments are checked,
   * and issues nothing.
   */
  signal?: AbortSignal;
}

/** Options of one launch. */
export interface LaunchOptions {
  /** `skip` compiles and caches without dispatching. @default "execute" */
  mode?: LaunchMode;
}

/**
 * A `Uint8Array` view of host bytes (no copy).
 *
 * @param data The bytes.
 * @param where Call site, for messages.
 * @returns The view.
 * @throws {TypeError} When `data` is neither an ArrayBuffer nor a view, or
 * its buffer is detached (a staging view already handed back by a write, a
 * transferred buffer): its bytes are gone, not zero.
 */
export function toBytes(data: HostData, where: string): Uint8Array {
  const raw = data as unknown;
  let buffer: ArrayBufferLike;
  if (ArrayBuffer.isView(raw)) buffer = raw.buffer;
  else if (
    raw instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && raw instanceof SharedArrayBuffer)
  ) {
    buffer = raw;
  } else {
    throw new TypeError(
      `${where}: data must be an ArrayBuffer or a typed array/DataView, got ${Object.prototype.toString.call(data)}`,
    );
  }
  if (buffer instanceof ArrayBuffer && buffer.detached) {
    throw new TypeError(
      `${where}: data's ArrayBuffer is detached (a staging view is handed back by the write that takes it; lend a new one)`,
    );
  }
  if (raw instanceof Uint8Array) return raw;
  if (ArrayBuffer.isView(raw)) return new Uint8Array(buffer, raw.byteOffset, raw.byteLength);
  return new Uint8Array(buffer);
}

/** Options of `ComputeClient.allReduce`: the element type, the reduction and the participants, with a timeout and abort signal. */
export interface AllReduceOptions extends CollectiveOptions {
  /** Element type: `f32`, `i32`, `u32` or `f16`; the element count is the byte count over its size. */
  dtype: ElemType;
  /** The reduction. @default "sum" */
  op?: ReduceOperation;
  /**
   * The participants, this device among them, each once: logical indices, or
   * `{ kind, index }` (e.g. `existing` devices). Every participant names the
   * same set; a device named twice is refused at the call (`RangeError`).
   */
  devices: readonly (number | LogicalDevice)[];
}
