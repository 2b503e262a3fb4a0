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
import type { BufferBinding, InfoWords, LaunchMode } from "./types.ts";

/** What the door knows of the device a launch targets. */
export interface LaunchLimits {
  /** The server: every handle and binding must belong to it. */
  readonly owner: object;
  /** `maxComputeWorkgroupsPerDimension`. */
  readonly maxCount: number;
  /** `maxStorageBufferBindingSize`. */
  readonly maxBinding: number;
  /** `minStorageBufferOffsetAlignment`, a power of two. */
  readonly storageAlign: number;
}

/**
 * Checks a launch: the kernel, the workgroup counts (or the indirect count's
 * memory), every binding (a live handle or binding of this device, aligned,
 * within the binding size limit), the info words' type, the number of
 * bindings against the kernel's declarations, and the mode.
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
 * that does not start at a multiple of `minStorageBufferOffsetAlignment`, or
 * an indirect count of fewer than 12 bytes.
 * @throws {ResourceLimitError} For a count above
 * `maxComputeWorkgroupsPerDimension` or a binding above `maxStorageBufferBindingSize`.
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
  for (let i = 0; i < n; i++) {
    const b = buffers[i]!;
    if (b instanceof Handle ? b.owner !== owner : !isBindingOf(b, owner)) badBinding(kernel, owner, b, `buffer ${i}`);
    const start = b.offsetStart;
    if ((start & alignMask) !== 0) badAlignment(kernel, i, b, limits.storageAlign);
    if (b.size - start - b.offsetEnd > maxBinding) badBindingSize(kernel, `buffer ${i}`, b, maxBinding);
  }
  if (info !== null && !(info instanceof Uint32Array || info instanceof Float32Array || info instanceof Int32Array)) {
    badInfo(kernel);
  }
  const declared = kernel.layout.bindings;
  if (declared !== null && declared !== n + (info === null || info.length === 0 ? 0 : 1)) {
    badArity(kernel, n, info !== null && info.length > 0);
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
    if (b.released) throw new TypeError(`${at}: memory ${b.memory.id} (${b.size} B) was released`);
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
    `launch(${kernel.name}) buffer ${i}: a view bound to a kernel must start at a multiple of minStorageBufferOffsetAlignment (${align} B); memory ${b.memory.id} is viewed from byte ${b.offsetStart}`,
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
    `launch(${kernel.name}): an indirect count needs 12 bytes (three u32), memory ${memory} has ${size}`,
  );
}
