/**
 * The all-reduce on the device of rank 0: at the call, a snapshot of the
 * source (so later work on it does not reach the reduction); once the other
 * participants' bytes are on the host, `dst = snapshot ⊕ others[0] ⊕ ...`
 * through one scratch buffer, each step a launch of the reduction kernel,
 * then one read of `dst` for the others.
 *
 * @module
 */

import type { Kernel } from "../contract/kernel.ts";
import { ManagedMemory } from "../contract/managed_memory.ts";
import type {
  BufferBinding,
  CopyDescriptor,
  CubeCount,
  DeviceProperties,
  ElemType,
  KernelArguments,
  LaunchMode,
  ReduceOperation,
} from "../contract/types.ts";
import type { StreamId } from "../ids.ts";
import { type DeviceReduceDtype, reduceGrid, reduceKernel, SNAPSHOT_KERNEL } from "./reduce_kernels.ts";

/** What the collectives need of their server. */
export interface CollectiveHost {
  /** Device properties. */
  readonly properties: DeviceProperties;
  /** Throws once the device is gone. */
  checkAlive(): void;
  /** The server's read path. */
  read(descriptors: readonly CopyDescriptor[], stream: StreamId): Promise<Uint8Array<ArrayBuffer>[]>;
  /** The server's write path. */
  write(writes: readonly (readonly [CopyDescriptor, Uint8Array])[], stream: StreamId): void;
  /** Binds fresh memory. */
  initializeMemory(memory: ManagedMemory, size: number, stream: StreamId): void;
  /** Queues a launch. */
  launch(kernel: Kernel, count: CubeCount, args: KernelArguments, mode: LaunchMode, stream: StreamId): void;
  /**
   * A host whose device lives in a Worker: reduces a byte range of shared
   * inputs into the first, in place, on the Worker's thread (see `ReducePart.reduceRange`).
   */
  reduceRange?(
    inputs: readonly Uint8Array[],
    reduce: { dtype: ElemType; op: ReduceOperation; from: number; to: number },
  ): Promise<void>;
  /**
   * Told that an all-reduce no longer needs the bytes `read` gave it as this
   * participant's source (`ok`: it succeeded, so nothing reads them any more).
   */
  sourceDone?(bytes: Uint8Array, ok: boolean): void;
}

/**
 * A contiguous descriptor of a binding's first `bytes` bytes.
 *
 * @param binding The memory.
 * @param bytes Bytes.
 * @returns The descriptor.
 */
export function whole(binding: BufferBinding, bytes: number): CopyDescriptor {
  return { binding, shape: [bytes], strides: [1], elemSize: 1 };
}

/** Fresh memory of `bytes` on `stream`, as a binding. */
function scratch(host: CollectiveHost, bytes: number, stream: StreamId): BufferBinding {
  const memory = new ManagedMemory(1, 1);
  host.initializeMemory(memory, bytes, stream);
  return { memory, offsetStart: 0, offsetEnd: 0, stream, size: bytes };
}

function grid(host: CollectiveHost, words: number): CubeCount {
  const [x, y] = reduceGrid(words, host.properties.hardware.maxCubeCount[0]);
  return { kind: "static", x, y, z: 1 };
}

/**
 * Queues a copy of `src` into fresh memory, in stream order (the source as
 * the work queued so far left it). Drop `.memory` when done.
 *
 * @param host The server.
 * @param src The source.
 * @param bytes Its byte count (a multiple of 4).
 * @param stream The stream.
 * @returns The snapshot.
 */
export function snapshotOnDevice(
  host: CollectiveHost,
  src: BufferBinding,
  bytes: number,
  stream: StreamId,
): BufferBinding {
  const out = scratch(host, bytes, stream);
  host.launch(
    SNAPSHOT_KERNEL,
    grid(host, bytes / 4),
    {
      buffers: [src, out],
      info: new Uint32Array([bytes / 4]),
    },
    "execute",
    stream,
  );
  return out;
}

/**
 * Queues `dst = first ⊕ others[0] ⊕ ...` in rank order, dividing by
 * `participants` in the last step of a `mean`.
 *
 * @param host The server.
 * @param first Rank 0's source (its snapshot).
 * @param dst The destination.
 * @param reduce Element type, reduction and participant count.
 * @param others The other participants' bytes, in rank order.
 * @param stream The stream.
 */
export function reduceOnDevice(
  host: CollectiveHost,
  first: BufferBinding,
  dst: BufferBinding,
  reduce: { dtype: DeviceReduceDtype; op: ReduceOperation; participants: number },
  others: readonly Uint8Array[],
  stream: StreamId,
): void {
  const bytes = dst.size - dst.offsetStart - dst.offsetEnd;
  const count = bytes / 4; // every device dtype is 4 bytes
  const x = scratch(host, bytes, stream);
  const kernel = reduceKernel(reduce.dtype, reduce.op);
  try {
    others.forEach((data, k) => {
      host.write([[whole(x, bytes), data]], stream); // ordered after the previous step read the scratch
      const divisor = reduce.op === "mean" && k === others.length - 1 ? reduce.participants : 1;
      host.launch(
        kernel,
        grid(host, count),
        {
          buffers: [k === 0 ? first : dst, x, dst],
          info: new Uint32Array([count, divisor]),
        },
        "execute",
        stream,
      );
    });
  } finally {
    x.memory.drop(); // reused only by work queued after these steps
  }
}
