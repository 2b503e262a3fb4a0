/**
 * The slow path of launch argument checks: builds the precise error.
 *
 * @module
 */

import { ResourceLimitError } from "../errors.ts";
import type { Kernel } from "../kernel/kernel.ts";

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
  throw new TypeError(
    `launch(${kernel.name}): the kernel declares ${kernel.layout.bindings} bindings in @group(0) but the launch binds ${buffers} buffer${
      buffers === 1 ? "" : "s"
    }${info ? " plus info words" : " and no info words"}`,
  );
}
