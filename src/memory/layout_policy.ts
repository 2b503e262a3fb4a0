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

/** `contiguous` is row-major; `optimized` lets a policy pad rows (contiguous on WebGPU). */
export type LayoutStrategy = "contiguous" | "optimized";

/** The shape of one tensor to lay out. */
export interface MemoryLayoutDescriptor {
  /** Extent of each dimension, in elements. */
  readonly shape: readonly number[];
  /** Bytes per element. */
  readonly elemSize: number;
  /** Layout strategy. @default "contiguous" */
  readonly strategy?: LayoutStrategy;
}

/** Where one tensor lives inside a group's reservation. */
export interface TensorPlacement {
  /** Bytes before the tensor. */
  readonly offsetStart: number;
  /** Bytes after the tensor. */
  readonly offsetEnd: number;
  /** Stride of each dimension, in elements. */
  readonly strides: readonly number[];
  /** Bytes of the tensor: `product(shape) × elemSize`. */
  readonly size: number;
}

/** A group's reservation size and the placement of each tensor. */
export interface LayoutPlan {
  /** Bytes to reserve for the whole group. */
  readonly size: number;
  /** One placement per descriptor, in order. */
  readonly placements: readonly TensorPlacement[];
}

/** Decides the layout of new tensors. Pure and synchronous: it runs on the client. */
export interface MemoryLayoutPolicy {
  /**
   * Lays out a group of tensors in one reservation.
   *
   * @param descriptors The tensors.
   * @returns The reservation size and each tensor's placement.
   */
  plan(descriptors: readonly MemoryLayoutDescriptor[]): LayoutPlan;
}

/**
 * Row-major strides of a shape, in elements.
 *
 * @example Usage
 * ```ts
 * import { contiguousStrides } from "@denogpu/runtime";
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

/** Checks a shape and element size, throwing a `RangeError` naming the bad value. */
export function checkShape(shape: readonly number[], elemSize: number, where: string): number {
  if (!Array.isArray(shape)) throw new TypeError(`${where}: shape must be an array of non-negative integers`);
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new RangeError(`${where}: shape [${shape}] has an invalid extent ${d}`);
    }
    n *= d;
  }
  if (!Number.isSafeInteger(elemSize) || elemSize <= 0) {
    throw new RangeError(`${where}: elemSize must be a positive integer, got ${elemSize}`);
  }
  const bytes = n * elemSize;
  if (!Number.isSafeInteger(bytes)) {
    throw new RangeError(`${where}: shape [${shape}] × ${elemSize} B is more bytes than Number.MAX_SAFE_INTEGER`);
  }
  return bytes;
}

/**
 * The contiguous layout policy: row-major strides, tensors at aligned offsets
 * of one reservation.
 *
 * @example Usage
 * ```ts
 * import { ContiguousLayoutPolicy } from "@denogpu/runtime";
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
