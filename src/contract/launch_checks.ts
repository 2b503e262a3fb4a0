/**
 * The slow path of launch argument checks: builds the precise error.
 *
 * @module
 */

import { ResourceLimitError } from "../errors.ts";
import type { Kernel } from "../kernel/kernel.ts";
import { bindingSizeError } from "../errors/_binding_size.ts";

/**
 * Throws the error a bad static count deserves (or returns when `onlyIfBad` and it is fine).
 *
 * @param kernel The kernel.
 * @param count The count as given.
 * @param max `maxComputeWorkgroupsPerDimension`.
 * @param onlyIfBad Return instead of throwing when the count is valid.
 */
export function badCount(kernel: Kernel, count: readonly number[], max: number, onlyIfBad = false): void {
  if (count.length < 1 || count.length > 3) {
    throw new RangeError(`launch(${kernel.name}): count must have 1 to 3 entries, got ${count.length}`);
  }
  const [x, y = 1, z = 1] = count;
  if (![x, y, z].every((v) => Number.isSafeInteger(v) && v! >= 0)) {
    throw new RangeError(`launch(${kernel.name}): workgroup counts must be non-negative integers, got [${count}]`);
  }
  if (x! > max || y > max || z > max) {
    throw new ResourceLimitError(
      "cube-count",
      `launch(${kernel.name})`,
      [x!, y, z],
      [max, max, max],
      "maxComputeWorkgroupsPerDimension",
    );
  }
  if (!onlyIfBad) throw new Error("unreachable: count was valid");
}

/**
 * Throws the error a binding count that does not match the kernel deserves.
 *
 * @param kernel The kernel.
 * @param buffers Buffers bound.
 * @param info Whether info words were given.
 */
export function badArity(kernel: Kernel, buffers: number, info: boolean): never {
  const names = kernel.layout.bindingNames;
  throw new TypeError(
    `launch(${kernel.name}): the kernel declares ${kernel.layout.bindings} bindings (${
      names.join(", ")
    }: one buffer each in (group, binding) order, info words taking the last when given) but the launch binds ${buffers} buffer${
      buffers === 1 ? "" : "s"
    }${info ? " plus info words" : " and no info words"}`,
  );
}

// The builders below serve the server's object-form launch and the client's
// indirect-count check. `ComputeClient.launch` keeps its own inline throws of
// the same messages: its body stays as it was measured (see its module doc).

/**
 * Throws the error info words of the wrong type deserve.
 *
 * @param kernel The kernel.
 */
export function badInfo(kernel: Kernel): never {
  throw new TypeError(`launch(${kernel.name}): info must be a Uint32Array, Int32Array or Float32Array`);
}

/**
 * Throws the error an unknown launch mode deserves.
 *
 * @param kernel The kernel.
 */
export function badMode(kernel: Kernel): never {
  throw new TypeError(`launch(${kernel.name}): mode must be "execute" or "skip"`);
}

/**
 * Throws the error an indirect count of fewer than 12 bytes deserves.
 *
 * @param kernel The kernel.
 * @param memory The memory's id.
 * @param size Its bytes in use.
 */
export function badIndirectSize(kernel: Kernel, memory: number, size: number): never {
  throw new RangeError(
    `launch(${kernel.name}): an indirect count needs 12 bytes (three u32), memory ${memory} has ${size}`,
  );
}

/**
 * Throws the error a binding above `maxStorageBufferBindingSize` deserves.
 *
 * @param kernel The kernel.
 * @param where Which binding, e.g. `buffer 2`.
 * @param size Its bytes.
 * @param max The limit.
 */
export function badBindingSize(kernel: Kernel, where: string, size: number, max: number): never {
  throw bindingSizeError(kernel.name, where, size, max);
}
