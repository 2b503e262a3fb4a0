/**
 * Memory layouts of tensors (CubeCL's `MemoryLayoutPolicy`): where each tensor
 * of a group lives inside one reservation, and its strides.
 *
 * The contiguous policy (the WebGPU default) gives row-major strides and puts
 * tensor `i` at the sum of the aligned sizes of the tensors before it, so a
 * group of tensors costs one reservation.
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import type { LayoutPlan } from "../contract/memory_types.ts";
import type { MemoryLayoutDescriptor } from "../contract/memory_types.ts";
import type { MemoryLayoutPolicy } from "../contract/memory_types.ts";
import { checkShape } from "../contract/descriptors.ts";

/**
 * Row-major strides of a shape, in elements.
 *
 * @example Usage
 * ```ts
 * import { contiguousStrides } from "./layout_policy.ts";
 * console.log(contiguousStrides([2, 3, 4])); // [12, 4, 1]
 * ```
 *
 * @param shape Extent of each dimension.
 * @returns The strides.
 */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

/**
 * The contiguous layout policy: row-major strides, tensors at aligned offsets
 * of one reservation.
 *
 * @example Usage
 * ```ts
 * import { ContiguousLayoutPolicy } from "./layout_policy.ts";
 * const plan = new ContiguousLayoutPolicy(256).plan([
 *   { shape: [3], elemSize: 4 },
 *   { shape: [2, 2], elemSize: 4 },
 * ]);
 * console.log(plan.size, plan.placements[1]!.offsetStart); // 512 256
 * ```
 */
export class ContiguousLayoutPolicy implements MemoryLayoutPolicy {
  /** Offset alignment of the tensors of a group. */
  readonly alignment: number;

  /**
   * Creates the policy.
   *
   * @param alignment Offset alignment in bytes (the device's).
   */
  constructor(alignment: number) {
    this.alignment = alignment;
  }

  plan(descriptors: readonly MemoryLayoutDescriptor[]): LayoutPlan {
    const sizes = descriptors.map((d, i) => checkShape(d.shape, d.elemSize, `layout descriptor ${i}`));
    let total = 0;
    const starts: number[] = [];
    sizes.forEach((size) => {
      starts.push(total);
      total += alignUp(size, this.alignment);
    });
    return {
      size: total,
      placements: descriptors.map((d, i) => ({
        offsetStart: starts[i]!,
        offsetEnd: total - starts[i]! - sizes[i]!,
        strides: contiguousStrides(d.shape),
        size: sizes[i]!,
      })),
    };
  }
}
