/**
 * Types used by the `ComputeServer` contract (CubeCL's `CubeCount`, `CubeDim`,
 * `KernelArguments`, `BufferBinding`, `CopyDescriptor`, `LaunchMode`,
 * `ExecutionMode`, `DeviceProperties`, profiling and device identity types).
 *
 * @module
 */

import type { ManagedMemory } from "./managed_memory.ts";
import type { StreamId } from "../ids.ts";

/**
 * The detached form of a handle: which memory, which byte range of it, and
 * the stream whose memory manager owns it (CubeCL's `BufferBinding`). A
 * `Handle` is itself a `BufferBinding`.
 *
 * The bytes used are `[offsetStart, size - offsetEnd)` of the reservation.
 */
export interface BufferBinding {
  /** The memory descriptor. */
  readonly memory: ManagedMemory;
  /** Bytes trimmed from the front of the reservation (a multiple of 4). */
  readonly offsetStart: number;
  /** Bytes trimmed from the back of the reservation. */
  readonly offsetEnd: number;
  /** The stream that owns the reservation. */
  readonly stream: StreamId;
  /** Size of the reservation in bytes, ignoring the offsets. */
  readonly size: number;
}

/**
 * How many workgroups ("cubes") a launch dispatches (CubeCL's `CubeCount`).
 *
 * - `static`: counts known on the host. Any zero component makes the launch a no-op.
 * - `dynamic`: a buffer holding three u32 counts `[x, y, z]`, read when the
 *   dispatch executes (`dispatchWorkgroupsIndirect`).
 */
export type CubeCount =
  | {
    /** Counts known on the host. */
    readonly kind: "static";
    /** Workgroups along x. */
    readonly x: number;
    /** Workgroups along y. */
    readonly y: number;
    /** Workgroups along z. */
    readonly z: number;
  }
  | {
    /** Counts read from device memory at execution. */
    readonly kind: "dynamic";
    /** Memory holding three u32 counts at its first byte. */
    readonly binding: BufferBinding;
  };

/** Units per workgroup: the `@workgroup_size` of a kernel (CubeCL's `CubeDim`). */
export interface CubeDim {
  /** Units along x. */
  readonly x: number;
  /** Units along y. */
  readonly y: number;
  /** Units along z. */
  readonly z: number;
}

/**
 * What a launch binds (CubeCL's `KernelArguments`): storage buffers at
 * bindings `0..n`, then, when present and non-empty, the info words at binding `n`.
 */
export interface KernelArguments {
  /** Storage buffers in binding order. */
  readonly buffers: readonly BufferBinding[];
  /** Scalars and metadata, bound last as a read-only storage buffer. */
  readonly info?: InfoWords;
}

/**
 * A typed view of memory for a transfer (CubeCL's `CopyDescriptor`). The byte
 * length moved is `product(shape) × elemSize`. Only contiguous row-major
 * strides are supported; others fail with `IoError` `unsupported-strides`.
 */
export interface CopyDescriptor {
  /** The memory. */
  readonly binding: BufferBinding;
  /** Extent of each dimension, in elements. */
  readonly shape: readonly number[];
  /** Stride of each dimension, in elements. */
  readonly strides: readonly number[];
  /** Bytes per element. */
  readonly elemSize: number;
}

/**
 * `execute` dispatches; `skip` compiles, validates and caches the pipeline but
 * dispatches nothing and resolves no buffer (CubeCL's dry run).
 */
export type LaunchMode = "execute" | "skip";

/**
 * Bounds-checking mode, part of a kernel's identity in CubeCL. WGSL kernels
 * written by hand carry their own checks, so the runtime only records it.
 */
export type ExecutionMode = "checked" | "unchecked" | "validate";

/** A raw buffer range handed out by `getResource`, kept alive until `release()`. */
export interface ManagedResource {
  /** The device buffer. */
  readonly buffer: GPUBuffer;
  /** Byte offset of the range. */
  readonly offset: number;
  /** Byte size of the range. */
  readonly size: number;
  /** Lets the memory be reused once no handle refers to it. */
  release(): void;
}

/** How a profile was timed: GPU timestamps, or the host clock around completion waits. */
export type TimingMethod = "device" | "system";

/** Start and end of a profile, in nanoseconds on the timing method's clock. */
export interface ProfileTicks {
  /** Start, in nanoseconds. */
  readonly start: number;
  /** End, in nanoseconds. */
  readonly end: number;
}

/** The result of `endProfile`: ticks that resolve once the device has run the work. */
export interface ProfileDuration {
  /** How the duration was measured. */
  readonly method: TimingMethod;
  /** Resolves to the start and end ticks. */
  readonly ticks: Promise<ProfileTicks>;
  /** With device timing, each dispatch's device start and end (empty with system timing). */
  readonly dispatches: Promise<readonly DispatchTiming[]>;
}

/** A device's identity (CubeCL's `DeviceId`): type (0 discrete, 1 integrated, 2 virtual, 3 cpu, 4 default) and index. */
export interface DeviceId {
  /** Device type. */
  readonly typeId: number;
  /** Index among devices of that type. */
  readonly indexId: number;
}

/** Reduction of a collective: CubeCL's `sum` and `mean`, and the element-wise `max` and `min`. */
export type ReduceOperation = "sum" | "mean" | "max" | "min";

/** Element type of a collective. */
export type ElemType = "f32" | "i32" | "u32" | "f16";

/** How long a collective waits for its peers, and where an all-reduce reduces. */
export interface CollectiveOptions {
  /** Milliseconds to wait for every participant to join before failing with `timeout`. @default 30000 */
  timeout?: number;
  /** Fails the collective with `aborted` when it fires before every participant has joined. */
  signal?: AbortSignal;
  /**
   * Where an all-reduce reduces: on the host, on the device of rank 0, or
   * `auto`: from 4 MiB per device, where this device set measured whole
   * all-reduces of the size to be faster (it tries each once), on the host
   * below that. `f16` always reduces on the host. Every participant must pass
   * the same. @default "auto"
   */
  reduceOn?: "auto" | "host" | "device";
}

/** What the hardware offers (CubeCL's `DeviceProperties.hardware`). */
export interface HardwareProperties {
  /** Widest load in bits. */
  readonly loadWidth: number;
  /** Smallest subgroup ("plane") size. */
  readonly planeSizeMin: number;
  /** Largest subgroup size. */
  readonly planeSizeMax: number;
  /** Storage buffers a kernel may bind besides the info binding. */
  readonly maxBindings: number;
  /** `maxComputeWorkgroupStorageSize` in bytes. */
  readonly maxSharedMemorySize: number;
  /** `maxComputeWorkgroupsPerDimension` on each axis. */
  readonly maxCubeCount: readonly [number, number, number];
  /** `maxComputeInvocationsPerWorkgroup`. */
  readonly maxUnitsPerCube: number;
  /** `maxComputeWorkgroupSize{X,Y,Z}`. */
  readonly maxCubeDim: readonly [number, number, number];
  /** Widest vector in elements. */
  readonly maxVectorSize: number;
}

/** Everything the client reads without a round trip to the server. */
export interface DeviceProperties {
  /** Enabled WebGPU features, and the ones the runtime cares about. */
  readonly features: {
    /** GPU timestamps. */
    readonly timestampQuery: boolean;
    /** `enable f16;` in WGSL. */
    readonly shaderF16: boolean;
    /** Subgroup operations (omit `enable subgroups;` on Deno). */
    readonly subgroups: boolean;
    /** Every enabled feature name. */
    readonly all: readonly string[];
  };
  /** Memory shape. */
  readonly memory: {
    /** Largest page: `maxStorageBufferBindingSize`. */
    readonly maxPageSize: number;
    /** Pool alignment: max of the uniform and storage offset alignments. */
    readonly alignment: number;
    /** `maxBufferSize`. */
    readonly maxBufferSize: number;
  };
  /** Hardware limits. */
  readonly hardware: HardwareProperties;
  /** `device` when `timestamp-query` is enabled, else `system`. */
  readonly timingMethod: TimingMethod;
  /** Adapter identity. */
  readonly identity: {
    /** Vendor. */
    readonly vendor: string;
    /** Architecture. */
    readonly architecture: string;
    /** Description (for example "llvmpipe (LLVM 15.0.6, 256 bits)"). */
    readonly description: string;
    /** True for a software/fallback adapter. */
    readonly isFallbackAdapter: boolean;
    /** A checksum of the features and limits. */
    readonly fingerprint: string;
  };
  /** Every device limit, by WebGPU name. */
  readonly limits: Readonly<Record<string, number>>;
}

/** Device time of one dispatch. */
export interface DispatchTiming {
  /** Kernel name. */
  readonly name: string;
  /** Stream it ran on. */
  readonly stream: StreamId;
  /**
   * Device start, in nanoseconds since the first timestamp read back by any
   * stream of the server (one time axis for every stream; a dispatch that ran
   * before that one but was read back later is negative).
   */
  readonly start: number;
  /** Device end, on the same axis as `start`. */
  readonly end: number;
}

/**
 * What memory is for, at `initializeMemory`: `storage` (the pools, by size) or
 * `count`, an indirect workgroup count of three u32 from a pool whose pages
 * hold counts only, so no launch's storage binding ever shares its buffer and
 * an indirect dispatch reads it in place.
 */
export type MemoryKind = "storage" | "count";

/** Info words accepted by a launch: any 32-bit typed array. */
export type InfoWords = Uint32Array | Int32Array | Float32Array;
