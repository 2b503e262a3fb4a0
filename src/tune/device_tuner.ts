/**
 * The tuner of one device: its decisions keyed by the device (adapter
 * identity, the limits and features that shape kernels, the runtime) and kept
 * in the store the `tuneCache` option names. A server makes one; so does the
 * main thread's side of a worker client's device.
 *
 * @module
 */

import type { DeviceProperties } from "../contract/types.ts";
import { createTuneStore, type TuneCacheOption } from "./create_tune_store.ts";
import { tuneDeviceKey } from "./device_key.ts";
import { type TuneLog, Tuner } from "./tuner.ts";

/**
 * Makes the tuner of a device.
 *
 * @example A device's tuner that keeps its decisions in memory
 * ```ts
 * import { deviceTuner } from "./device_tuner.ts";
 * import type { DeviceProperties } from "../contract/types.ts";
 *
 * const props = {
 *   identity: { vendor: "nvidia", architecture: "hopper", description: "NVIDIA H200", device: "" },
 *   limits: {},
 *   features: { all: [] },
 * } as unknown as DeviceProperties;
 * const tuner = deviceTuner(props, "memory", () => {});
 * console.log(tuner instanceof Object); // true
 * ```
 *
 * @param props The device's properties (identity, limits, features).
 * @param tuneCache Where decisions persist (the `tuneCache` option).
 * @param log Where the tuner reports.
 * @returns The tuner.
 * @throws {TypeError} For a `tuneCache` that names no store (see `createTuneStore`).
 */
export function deviceTuner(props: DeviceProperties, tuneCache: TuneCacheOption | undefined, log: TuneLog): Tuner {
  return new Tuner({
    store: createTuneStore(tuneCache),
    device: tuneDeviceKey({
      ...props.identity,
      limits: props.limits,
      features: props.features.all,
      runtime: `deno ${Deno.version.deno}`,
    }),
    log,
  });
}
