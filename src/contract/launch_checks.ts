/**
 * The one door every launch passes: `checkLaunch` runs at the top of the
 * server's launch path (`WebGpuServer.launchRaw`), which both
 * `ComputeClient.launch` and the contract's `ComputeServer.launch` reach, so a
 * launch is checked the same way whichever entry it came through. Everything
 * WebGPU would otherwise refuse later, failing a whole batch or truncating a
 * count, throws here, at the call, with a typed error naming the argument.
 *
 * The fast path is a few comparisons per binding and allocates nothing; the
 * messages are built by the `bad*` functions below, off that path.
 *
 * @module
 */

import { ResourceLimitError } from "../errors.ts";
import { bindingSizeError } from "../errors/_binding_size.ts";
import { Handle } from "./handle.ts";
import { Kernel } from "./kernel.ts";
import { ManagedMemory } from "./managed_memory.ts";
import type { BufferBinding, DeviceProperties, InfoWords, LaunchMode } from "./types.ts";
import { formatBytesExact } from "../_util/format.ts";

/** Bytes of the scratch buffer a zero-byte binding binds instead (WebGPU cannot bind 0 bytes). */
export const EMPTY_BINDING_BYTES = 256;

let nextLimitsId = 1;

/** What the door knows of the device a launch targets. */
export interface LaunchLimits {
  /** The server: every handle and binding must belong to it. */
  readonly owner: object;
  /** Process-unique id of these limits (a kernel remembers the ids it was found to fit, not the server). */
  readonly id: number;
  /** `maxComputeWorkgroupsPerDimension`. */
  readonly maxCount: number;
  /** `maxStorageBufferBindingSize`. */
  readonly maxBinding: number;
  /** `minStorageBufferOffsetAlignment`, a power of two. */
  readonly storageAlign: number;
  /** `maxComputeWorkgroupSizeX/Y/Z`. */
  readonly maxCubeDim: readonly [number, number, number];
  /** `maxComputeInvocationsPerWorkgroup`. */
  readonly maxUnitsPerCube: number;
  /** `maxComputeWorkgroupStorageSize`. */
  readonly maxSharedMemory: number;
  /** `maxStorageBuffersPerShaderStage`. */
  readonly maxStorageBuffers: number;
  /** `maxUniformBuffersPerShaderStage`. */
  readonly maxUniformBuffers: number;
  /** `maxUniformBufferBindingSize`. */
  readonly maxUniformBinding: number;
}

/**
 * The door's limits for a device.
 *
 * @param owner The server (or the worker connection standing in for it).
 * @param props The device's properties.
 * @returns The limits.
 */
export function launchLimits(owner: object, props: DeviceProperties): LaunchLimits {
  const l = props.limits;
  return {
    owner,
    id: nextLimitsId++,
    maxCount: props.hardware.maxCubeCount[0],
    maxBinding: props.memory.maxPageSize,
    storageAlign: l.minStorageBufferOffsetAlignment ?? 256,
    maxCubeDim: props.hardware.maxCubeDim,
    maxUnitsPerCube: props.hardware.maxUnitsPerCube,
    maxSharedMemory: props.hardware.maxSharedMemorySize,
    maxStorageBuffers: l.maxStorageBuffersPerShaderStage ?? 8,
    maxUniformBuffers: l.maxUniformBuffersPerShaderStage ?? 12,
    maxUniformBinding: l.maxUniformBufferBindingSize ?? 65536,
  };
}

/**
 * Alignment of info words' offsets in an arena that binds them as read-only
 * storage or as a uniform: the larger of the two offset alignments.
 *
 * @param props The device's properties.
 * @returns The alignment in bytes.
 */
export function infoOffsetAlignment(props: DeviceProperties): number {
  const l = props.limits;
  return Math.max(l.minStorageBufferOffsetAlignment ?? 256, l.minUniformBufferOffsetAlignment ?? 256);
}

/**
 * Checks a launch: the kernel (once per device: its workgroup size,
 * workgroup memory and buffer counts against the device's limits), the
 * workgroup counts (or the indirect count's memory), every binding (a live
 * handle or binding of this device, aligned, within the binding size limit,
 * at least as long as its WGSL type), the info words (their type, and at
 * least as long as the binding they take), the number of bindings against
 * the kernel's declarations, and the mode.
 *
 * @param limits The target device's limits.
 * @param kernel The kernel.
 * @param buffers Storage bindings in order.
 * @param info Info words, or null.
 * @param x Workgroups along x (ignored with `indirect`).
 * @param y Workgroups along y.
 * @param z Workgroups along z.
 * @param indirect Memory holding `[x, y, z]`, or null for a static count.
 * @param mode `execute` or `skip`.
 * @throws {TypeError} For a kernel not made by `defineKernel`, buffers that
 * are not an array of live handles (or bindings) of this device, info words
 * that are not a 32-bit typed array, a binding count that does not match the
 * kernel's declarations, or an unknown mode.
 * @throws {RangeError} For a count that is not a non-negative integer, a view
 * that does not start at a multiple of `minStorageBufferOffsetAlignment`, an
 * indirect count of fewer than 12 bytes, or a buffer or info words shorter
 * than the WGSL type of the binding they take.
 * @throws {ResourceLimitError} For a count above
 * `maxComputeWorkgroupsPerDimension`, a binding above `maxStorageBufferBindingSize`
 * (or uniform info words above `maxUniformBufferBindingSize`), or a kernel
 * that does not fit the device: its workgroup size, invocations, workgroup
 * memory, or storage or uniform buffers above the device's limits.
 */
export function checkLaunch(
  limits: LaunchLimits,
  kernel: Kernel,
  buffers: readonly BufferBinding[],
  info: InfoWords | null,
  x: number,
  y: number,
  z: number,
  indirect: BufferBinding | null,
  mode: LaunchMode,
): void {
  if (!(kernel instanceof Kernel)) badKernel();
  if (!Array.isArray(buffers)) badBuffers(kernel);
  const owner = limits.owner;
  const alignMask = limits.storageAlign - 1;
  const maxBinding = limits.maxBinding;
  const n = buffers.length;
  const layout = kernel.layout;
  const sizes = layout.bindingSizes;
  for (let i = 0; i < n; i++) {
    const b = buffers[i]!;
    if (b instanceof Handle ? b.owner !== owner : !isBindingOf(b, owner)) badBinding(kernel, owner, b, `buffer ${i}`);
    const start = b.offsetStart;
    if ((start & alignMask) !== 0) badAlignment(kernel, i, b, limits.storageAlign);
    const bytes = b.size - start - b.offsetEnd;
    if (bytes > maxBinding) badBindingSize(kernel, `buffer ${i}`, b, maxBinding);
    // What is bound is never shorter than the bytes: only a shorter buffer needs the exact test.
    if (bytes < (sizes[i] ?? 0)) checkShortBinding(kernel, i, bytes);
  }
  const withInfo = info !== null && info.length > 0;
  if (info !== null && !(info instanceof Uint32Array || info instanceof Float32Array || info instanceof Int32Array)) {
    badInfo(kernel);
  }
  const declared = layout.bindings;
  if (declared !== null && declared !== n + (withInfo ? 1 : 0)) badArity(kernel, n, withInfo);
  if (kernel.fits[withInfo ? 1 : 0] !== limits.id) fitKernel(limits, kernel, n, withInfo);
  if (withInfo) {
    if (info.length * 4 < (sizes[n] ?? 0)) badShortInfo(kernel, n, info.length);
    if (info.length * 4 > limits.maxUniformBinding && layout.bindingKinds[n] === "uniform") {
      badUniformInfo(kernel, info.length, limits.maxUniformBinding);
    }
  }
  if (mode !== "execute" && mode !== "skip") badMode(kernel);
  if (indirect === null) {
    const max = limits.maxCount;
    // `v >>> 0 === v` accepts exactly the integers 0..2^32-1.
    if ((x >>> 0) !== x || (y >>> 0) !== y || (z >>> 0) !== z || x > max || y > max || z > max) {
      badCount(kernel, [x, y, z], max);
    }
  } else {
    if (indirect instanceof Handle ? indirect.owner !== owner : !isBindingOf(indirect, owner)) {
      badBinding(kernel, owner, indirect, "indirect count");
    }
    const size = indirect.size - indirect.offsetStart - indirect.offsetEnd;
    if (size < 12) badIndirectSize(kernel, indirect.memory.id, size);
  }
}

/**
 * Checks once per device that a kernel fits it (workgroup size, invocations,
 * workgroup memory, storage and uniform buffers), and remembers it did.
 */
function fitKernel(limits: LaunchLimits, kernel: Kernel, buffers: number, info: boolean): void {
  const layout = kernel.layout;
  const ws = layout.workgroupSize;
  if (ws !== null) {
    const max = limits.maxCubeDim;
    if (ws[0] > max[0] || ws[1] > max[1] || ws[2] > max[2]) {
      throw new ResourceLimitError("cube-dim", kernel.name, ws, max, "maxComputeWorkgroupSize{X,Y,Z}");
    }
    const units = ws[0] * ws[1] * ws[2];
    if (units > limits.maxUnitsPerCube) {
      throw new ResourceLimitError(
        "units",
        kernel.name,
        [units],
        [limits.maxUnitsPerCube],
        "maxComputeInvocationsPerWorkgroup",
      );
    }
  }
  const shared = layout.sharedMemoryBytes;
  if (shared !== null && shared > limits.maxSharedMemory) {
    throw new ResourceLimitError(
      "shared-memory",
      kernel.name,
      [shared],
      [limits.maxSharedMemory],
      "maxComputeWorkgroupStorageSize",
    );
  }
  // Every buffer binds as read-write storage; info words as a uniform when the kernel declares that binding so.
  const uniformInfo = info && layout.bindingKinds[buffers] === "uniform";
  const storage = buffers + (info && !uniformInfo ? 1 : 0);
  if (storage > limits.maxStorageBuffers) {
    throw new ResourceLimitError(
      "bindings",
      kernel.name,
      [storage],
      [limits.maxStorageBuffers],
      "maxStorageBuffersPerShaderStage",
      uniformInfo || !layout.bindingKinds.includes("uniform") ? undefined : UNIFORM_HINT,
    );
  }
  if (uniformInfo) {
    if (limits.maxUniformBuffers < 1) {
      const max = [limits.maxUniformBuffers];
      throw new ResourceLimitError("bindings", kernel.name, [1], max, "maxUniformBuffersPerShaderStage");
    }
    const size = layout.bindingSizes[buffers] ?? 0;
    if (size > limits.maxUniformBinding) {
      throw new ResourceLimitError(
        "binding-size",
        kernel.name,
        [size],
        [limits.maxUniformBinding],
        "maxUniformBufferBindingSize",
      );
    }
  }
  kernel.fits[info ? 1 : 0] = limits.id;
}

const UNIFORM_HINT =
  "a var<uniform> bound to a handle binds as storage (pooled memory shares GPUBuffers with writable bindings); declare it last and pass its contents as info words to bind it as a uniform";

/** True when `b` is a binding (not a handle) of memory bound by `owner`. */
function isBindingOf(b: unknown, owner: object): boolean {
  if (b === null || typeof b !== "object") return false;
  const memory = (b as BufferBinding).memory;
  return memory instanceof ManagedMemory && memory.server === owner;
}

/**
 * Throws the error a count given in a form the launch does not know deserves
 * (not `[x, y, z]`, a `CubeCount` or a handle), or an array of the wrong length.
 *
 * @param kernel The kernel (checked first).
 * @param count The count as given.
 */
export function badCountForm(kernel: unknown, count: unknown): never {
  if (!(kernel instanceof Kernel)) badKernel();
  if (Array.isArray(count)) {
    throw new RangeError(`launch(${kernel.name}): count must have 1 to 3 entries, got ${count.length}`);
  }
  throw new TypeError(`launch(${kernel.name}): count must be [x, y, z], a CubeCount or a Handle`);
}

function badKernel(): never {
  throw new TypeError("launch: kernel must come from defineKernel()");
}

function badBuffers(kernel: Kernel): never {
  throw new TypeError(`launch(${kernel.name}): buffers must be an array of Handle`);
}

function badBinding(kernel: Kernel, owner: object, b: unknown, where: string): never {
  const at = `launch(${kernel.name}) ${where}`;
  if (b instanceof Handle) {
    if (b.released) throw new TypeError(`${at}: memory ${b.memory.id} (${formatBytesExact(b.size)}) was released`);
    throw new TypeError(`${at}: memory ${b.memory.id} belongs to another client's device`);
  }
  const memory = b !== null && typeof b === "object" ? (b as BufferBinding).memory : undefined;
  if (memory instanceof ManagedMemory && memory.server !== owner) {
    throw new TypeError(`${at}: memory ${memory.id} belongs to another server`);
  }
  throw new TypeError(`${at}: expected a Handle (or a BufferBinding), got ${Object.prototype.toString.call(b)}`);
}

function badAlignment(kernel: Kernel, i: number, b: BufferBinding, align: number): never {
  throw new RangeError(
    `launch(${kernel.name}) buffer ${i}: a view bound to a kernel must start at a multiple of minStorageBufferOffsetAlignment (${
      formatBytesExact(align)
    }); memory ${b.memory.id} is viewed from byte ${b.offsetStart}`,
  );
}

function badBindingSize(kernel: Kernel, where: string, b: BufferBinding, max: number): never {
  throw bindingSizeError(kernel.name, where, b.size - b.offsetStart - b.offsetEnd, max);
}

function badInfo(kernel: Kernel): never {
  throw new TypeError(`launch(${kernel.name}): info must be a Uint32Array, Int32Array or Float32Array`);
}

function badArity(kernel: Kernel, buffers: number, info: boolean): never {
  const names = kernel.layout.bindingNames;
  throw new TypeError(
    `launch(${kernel.name}): the kernel declares ${kernel.layout.bindings} bindings (${
      names.join(", ")
    }: one buffer each in (group, binding) order, info words taking the last when given) but the launch binds ${buffers} buffer${
      buffers === 1 ? "" : "s"
    }${info ? " plus info words" : " and no info words"}`,
  );
}

/**
 * The exact test for a buffer shorter than its binding's WGSL type: what is
 * bound is the bytes rounded up to a word, or the scratch buffer for none.
 */
function checkShortBinding(kernel: Kernel, i: number, bytes: number): void {
  const bound = bytes === 0 ? EMPTY_BINDING_BYTES : (bytes + 3) & ~3;
  if (bound < kernel.layout.bindingSizes[i]!) badShortBinding(kernel, i, bytes);
}

function badShortBinding(kernel: Kernel, i: number, bytes: number): never {
  const name = kernel.layout.bindingNames[i] ?? `binding ${i}`;
  const need = kernel.layout.bindingSizes[i]!;
  throw new RangeError(
    `launch(${kernel.name}) buffer ${i}: binding "${name}" needs at least ${
      formatBytesExact(need)
    } by its WGSL type, and the buffer has ${formatBytesExact(bytes)} (WebGPU would fail the whole batch at submit)`,
  );
}

function badShortInfo(kernel: Kernel, n: number, words: number): never {
  const name = kernel.layout.bindingNames[n] ?? `binding ${n}`;
  const need = Math.ceil(kernel.layout.bindingSizes[n]! / 4);
  throw new RangeError(
    `launch(${kernel.name}): info words take binding "${name}", whose WGSL type needs ${need} words (${
      need * 4
    } B), and the launch gives ${words} (WebGPU would fail the whole batch at submit)`,
  );
}

function badUniformInfo(kernel: Kernel, words: number, max: number): never {
  throw new ResourceLimitError(
    "binding-size",
    `launch(${kernel.name})`,
    [words * 4],
    [max],
    "maxUniformBufferBindingSize",
  );
}

function badMode(kernel: Kernel): never {
  throw new TypeError(`launch(${kernel.name}): mode must be "execute" or "skip"`);
}

function badCount(kernel: Kernel, count: readonly number[], max: number): never {
  const [x, y, z] = count as [number, number, number];
  if (![x, y, z].every((v) => Number.isSafeInteger(v) && v >= 0)) {
    throw new RangeError(`launch(${kernel.name}): workgroup counts must be non-negative integers, got [${count}]`);
  }
  throw new ResourceLimitError(
    "cube-count",
    `launch(${kernel.name})`,
    [x, y, z],
    [max, max, max],
    "maxComputeWorkgroupsPerDimension",
  );
}

function badIndirectSize(kernel: Kernel, memory: number, size: number): never {
  throw new RangeError(
    `launch(${kernel.name}): an indirect count needs 12 bytes (three u32), memory ${memory} has ${
      formatBytesExact(size)
    }`,
  );
}
