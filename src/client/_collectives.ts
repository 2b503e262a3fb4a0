/**
 * The client's collectives over its device link: all-reduce, send and
 * receive, their arguments checked here and the devices named through this
 * thread's device directory. The bodies of `ComputeClient`'s collective
 * methods.
 *
 * @module
 */

import type { Handle } from "../contract/handle.ts";
import { checkHandle } from "../contract/handle_checks.ts";
import type { CollectiveOptions } from "../contract/types.ts";
import { directory } from "../collective/device_directory.ts";
import type { LogicalDevice } from "../collective/device_ids.ts";
import type { Target } from "./_data.ts";
import type { AllReduceOptions } from "./client_types.ts";

/** See `ComputeClient.allReduce`. */
export function allReduceOn(t: Target, src: Handle, dst: Handle, options: AllReduceOptions): Promise<void> {
  if (options === null || typeof options !== "object") throw new TypeError("allReduce: options must be an object");
  const s = checkHandle(t.link.owner, src, "allReduce src");
  const d = checkHandle(t.link.owner, dst, "allReduce dst");
  if (!Array.isArray(options.devices)) throw new TypeError("allReduce: devices must be an array");
  const devices = options.devices.map((x, i) => directory.idOf(x, `allReduce devices[${i}]`));
  const { dtype, op = "sum", devices: _, ...rest } = options;
  return t.link.allReduce(s, d, dtype, t.stream, op, devices, rest);
}

/** See `ComputeClient.send`. */
export function sendOn(
  t: Target,
  handle: Handle,
  to: number | LogicalDevice,
  options: CollectiveOptions,
): Promise<void> {
  const h = checkHandle(t.link.owner, handle, "send");
  const peer = directory.idOf(to, "send");
  const descriptor = { binding: h, shape: [h.sizeInUse], strides: [1], elemSize: 1 };
  return t.link.send(descriptor, "u32", t.stream, peer, options);
}

/** See `ComputeClient.recv`. */
export function recvOn(
  t: Target,
  handle: Handle,
  from: number | LogicalDevice,
  options: CollectiveOptions,
): Promise<void> {
  const h = checkHandle(t.link.owner, handle, "recv");
  return t.link.recv(h, "u32", t.stream, directory.idOf(from, "recv"), options);
}
