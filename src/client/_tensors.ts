/**
 * The client's tensor groups: checking and planning a group's layout before
 * anything is allocated, carving one reservation into tensors, and checking
 * `createTensors` entries against the plan.
 *
 * @module
 */

import { ResourceLimitError } from "../errors.ts";
import type { Handle } from "../contract/handle.ts";
import type { DeviceProperties } from "../contract/types.ts";
import type { ServerUtilities } from "../contract/compute_server.ts";
import { checkLayoutDescriptor } from "../contract/handle_checks.ts";
import { type HostData, type Tensor, toBytes } from "./client_types.ts";
import type { LayoutPlan, MemoryLayoutDescriptor } from "../contract/memory_types.ts";
import { formatBytesExact } from "../_util/format.ts";

/** What planning a group needs of a server: its layout policy and properties (a worker client's connection has both). */
export interface TensorPlanner {
  /** The layout policy, as `utilities().layoutPolicy`. */
  utilities(): Pick<ServerUtilities, "layoutPolicy">;
  /** The device's properties. */
  readonly properties: DeviceProperties;
}

/**
 * Checks each descriptor, then lays the group out with the server's layout
 * policy; throws before anything is allocated.
 *
 * @param server The server.
 * @param descriptors The group.
 * @param where The call, for messages.
 * @returns The plan.
 * @throws {TypeError} For a malformed descriptor or an unknown strategy.
 * @throws {ResourceLimitError} When the group exceeds `maxBufferSize`.
 */
export function planTensors(
  server: TensorPlanner,
  descriptors: readonly MemoryLayoutDescriptor[],
  where: string,
): LayoutPlan {
  descriptors.forEach((d, i) => checkLayoutDescriptor(d, `${where}[${i}]`));
  const plan = server.utilities().layoutPolicy.plan(descriptors);
  const max = server.properties.memory.maxBufferSize;
  if (!(plan.size <= max)) throw new ResourceLimitError("buffer-size", where, [plan.size], [max], "maxBufferSize");
  return plan;
}

/**
 * Reserves `plan` once (through `empty`) and returns one view of it per
 * descriptor; the group's own reference is released.
 *
 * @param empty Reserves a handle of a size.
 * @param descriptors The group.
 * @param plan Its plan.
 * @returns One tensor per descriptor.
 */
export function allocTensors(
  empty: (size: number) => Handle,
  descriptors: readonly MemoryLayoutDescriptor[],
  plan: LayoutPlan,
): Tensor[] {
  const base = empty(plan.size);
  try {
    return plan.placements.map((p, i) => ({
      handle: base.view(p.offsetStart, p.offsetEnd),
      shape: [...descriptors[i]!.shape],
      strides: p.strides,
      elemSize: descriptors[i]!.elemSize,
    }));
  } finally {
    base.release();
  }
}

/**
 * Checks `createTensors` entries and plans their group: each entry's shape,
 * and its data's length against its place in the plan.
 *
 * @param server The server.
 * @param entries The entries.
 * @returns The bytes of each entry, the descriptors and the plan.
 * @throws {TypeError} For an entry that is not `{ descriptor, data }`, or data that is not host data.
 * @throws {RangeError} When a data length does not match its shape.
 */
export function checkTensorEntries(
  server: TensorPlanner,
  entries: readonly { descriptor: MemoryLayoutDescriptor; data: HostData }[],
): { bytes: Uint8Array[]; descriptors: MemoryLayoutDescriptor[]; plan: LayoutPlan } {
  if (!Array.isArray(entries)) throw new TypeError("createTensors: entries must be an array of { descriptor, data }");
  entries.forEach((e, i) => {
    if (e === null || typeof e !== "object") {
      throw new TypeError(
        `createTensors[${i}]: expected { descriptor, data }, got ${Object.prototype.toString.call(e)}`,
      );
    }
  });
  const bytes = entries.map((e, i) => toBytes(e.data, `createTensors[${i}]`));
  const descriptors = entries.map((e) => e.descriptor);
  const plan = planTensors(server, descriptors, "createTensors");
  plan.placements.forEach((p, i) => {
    const b = bytes[i]!;
    if (b.byteLength !== p.size) {
      const d = descriptors[i]!;
      throw new RangeError(
        `createTensors[${i}]: ${formatBytesExact(b.byteLength)} given for shape [${d.shape}] × ${d.elemSize} B`,
      );
    }
  });
  return { bytes, descriptors, plan };
}
