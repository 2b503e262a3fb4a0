/**
 * The messages between a worker client and its server's Worker, besides the
 * command ring: the handshake, payloads (data too large or too irregular for
 * a ring record: kernel sources, write bytes, call arguments), replies to
 * calls, and the worker's notices (device loss, room in the ring, a staging
 * buffer handed back, the end).
 *
 * Every record that needs a payload names it by id; the main thread posts
 * the payload before it publishes the record, and the worker, reaching a
 * record whose payload has not arrived yet, waits for it before it reads on,
 * so payloads keep the ring's order.
 *
 * @module
 */

import type { DeviceProperties, ElemType, ReduceOperation } from "../../contract/types.ts";
import type { ServerOptions } from "../../options/server_options.ts";
import type { EncodedError } from "./error_codec.ts";
import type { RingBuffers } from "./command_ring.ts";

/** The name every server Worker is started with; its entry module serves only under this name. */
export const WORKER_NAME = "denogpu-server";

/** Main → worker, first message: the server's options and the ring. */
export interface InitMessage {
  readonly type: "init";
  /** Server options (cloneable: no device or adapter objects). */
  readonly options: ServerOptions;
  /** The command ring's shared memory. */
  readonly ring: RingBuffers;
}

/** Main → worker: the payload of a record. */
export interface PayloadMessage {
  readonly type: "payload";
  /** The id the record names. */
  readonly id: number;
  /** The payload (see `CallPayload`, `KernelPayload`, `WritePayload`, or info words). */
  readonly data: unknown;
}

/** The payload of a `kernel` record: what `defineKernel` needs to make the same kernel. */
export interface KernelPayload {
  readonly name: string;
  readonly wgsl: string;
  readonly entryPoint: string;
  readonly constants: Readonly<Record<string, number>>;
  /** The main thread's id of the kernel, checked against the worker's. */
  readonly id: string;
}

/** The payload of a `write` record whose bytes are not inline. */
export interface WritePayload {
  /** The bytes' buffer (transferred). */
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  /** Offset of the bytes in it. */
  readonly offset: number;
  /** Their length. */
  readonly length: number;
  /** True when the buffer is a lent staging buffer to hand back after the write. */
  readonly recycle: boolean;
}

/** A binding by handle slot, as calls name them. */
export interface WireBinding {
  /** The memory's slot (see `RemoteMemory`). */
  readonly slot: number;
  readonly offsetStart: number;
  readonly offsetEnd: number;
}

/** A copy descriptor by handle id. */
export interface WireDescriptor extends WireBinding {
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly elemSize: number;
}

/** The payload of a `call` record: the method and its arguments. */
export type CallPayload =
  | { readonly method: "flush" | "sync" | "startProfile" | "beginCapture"; readonly stream: number }
  | { readonly method: "endCapture"; readonly stream: number; readonly sameAsWarmup?: boolean }
  | { readonly method: "memoryUsage" }
  /** Answers at once: every record queued before it has run (shared memory they wrote from is free again). */
  | { readonly method: "fence" }
  | { readonly method: "memoryReport"; readonly stream: number }
  | {
    readonly method: "read";
    readonly stream: number;
    readonly descriptors: readonly WireDescriptor[];
    /** Copy the one result into this shared memory instead of moving it back (collectives). */
    readonly into?: SharedArrayBuffer;
  }
  | {
    readonly method: "reduceShared";
    /** Every participant's bytes; the range is reduced into the first, in place. */
    readonly inputs: readonly {
      readonly buffer: SharedArrayBuffer;
      readonly offset: number;
      readonly length: number;
    }[];
    readonly dtype: ElemType;
    readonly op: ReduceOperation;
    readonly from: number;
    readonly to: number;
  }
  | { readonly method: "endProfile" | "discardProfile"; readonly stream: number; readonly token: unknown }
  | { readonly method: "simulateLoss" | "stats" }
  | { readonly method: "installMemoryPools"; readonly stream: number; readonly config: unknown };

/** The server's counters (the `stats` call, for tests and benches). */
export interface WorkerStats {
  readonly pipelinesCompiled: number;
  readonly bindGroupsCreated: number;
  readonly graphCount: number;
  /** Compute passes begun by every stream. */
  readonly passesBegun: number;
  /** Milliseconds the worker spent running records. */
  readonly busyMs: number;
  /** Records run. */
  readonly records: number;
  /** Passes of the loop over the ring (wake-ups and time slices). */
  readonly drains: number;
}

/** A read's bytes as they cross: a transferred buffer and the range of it that was read. */
export interface WireBytes {
  readonly buffer: ArrayBuffer;
  readonly offset: number;
  readonly length: number;
}

/** A profile's outcome as it crosses: each promise of `ProfileDuration`, settled. */
export interface WireDuration {
  readonly method: "device" | "system";
  readonly ticks: { readonly ok: boolean; readonly value?: unknown; readonly error?: unknown };
  readonly dispatches: { readonly ok: boolean; readonly value?: unknown; readonly error?: unknown };
}

/** Worker → main, after `init`: the device is ready. */
export interface ReadyMessage {
  readonly type: "ready";
  /** The device's properties. */
  readonly properties: DeviceProperties;
  /** Stream slots (a stream id uses slot `id % maxStreams`). */
  readonly maxStreams: number;
  /** Whether the worker's reads map early (the `fastReads` option, verified at start). */
  readonly fastReads: boolean;
  /** The Worker's thread id, where it can be read (see `thread_exit.ts`), else null. */
  readonly thread: number | null;
}

/** Worker → main: the server could not be made; the worker has closed. */
export interface FailedMessage {
  readonly type: "failed";
  readonly error: EncodedError;
  /** The Worker's thread id, where it can be read, else null. */
  readonly thread: number | null;
}

/** Worker → main: a call's outcome. */
export interface ReplyMessage {
  readonly type: "reply";
  readonly id: number;
  /** True when `value` holds the result, false when `error` holds the failure. */
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: EncodedError;
  /** The stream's capture state after the call (capture calls only). */
  readonly capture?: "none" | "prepared" | "recording";
}

/** Worker → main: the device was lost; every later call fails with `error`. */
export interface LostMessage {
  readonly type: "lost";
  readonly error: EncodedError;
}

/** Worker → main: the ring has room again (the main thread asked, holding spilled records). */
export interface SpaceMessage {
  readonly type: "space";
}

/** Worker → main: a staging buffer written from, handed back to the pool. */
export interface RecycleMessage {
  readonly type: "recycle";
  readonly buffer: ArrayBuffer;
}

/** Worker → main: the device is destroyed and the worker closes itself now. */
export interface ClosedMessage {
  readonly type: "closed";
}

/** Every message the worker sends. */
export type WorkerMessage =
  | ReadyMessage
  | FailedMessage
  | ReplyMessage
  | LostMessage
  | SpaceMessage
  | RecycleMessage
  | ClosedMessage;
