/**
 * The tuner of one device: its decisions keyed by the device (adapter
 * identity, the limits and features that shape kernels, the runtime), kept
 * in the store the `tuneCache` option names, and its lines written to the
 * client's logger (`logger.autotune` and its sink). A server makes one; so
 * does the main thread's side of a worker client's device, from the same
 * client options, since that tuner runs on the main thread.
 *
 * @module
 */

import type { DeviceProperties } from "../contract/types.ts";
import { readGrantedEnv } from "../_util/granted_env.ts";
import { LOG_ENV_VAR, type LoggerOptions, parseLogEnv, ServerLogger } from "../logger.ts";
import { createTuneStore, type TuneCacheOption } from "./create_tune_store.ts";
import { tuneDeviceKey } from "./device_key.ts";
import { Tuner } from "./tuner.ts";

/** The client options a device's tuner is made from. */
export interface DeviceTunerOptions {
  /** Where decisions persist (the `tuneCache` option). @default "local-storage" */
  readonly tuneCache?: TuneCacheOption;
  /**
   * Where the tuner reports: the server's own logger, or the client's
   * `logger` option for a tuner beside a device whose logger lives in a
   * Worker (read from `DENOGPU_LOG` when omitted, as a server does). A logger
   * made here appends to a file sink: the device's own logger, in its Worker,
   * writes the same file. Decisions are logged when `autotune` is on;
   * warnings (a dropped candidate, a store that failed) always are.
   */
  readonly logger?: ServerLogger | LoggerOptions;
}

/** The logger a tuner writes to, made from the client's option when the device's own is out of reach. */
function tunerLogger(logger: ServerLogger | LoggerOptions | undefined): ServerLogger {
  if (logger instanceof ServerLogger) return logger;
  const options = logger ?? parseLogEnv(readGrantedEnv(LOG_ENV_VAR)); // the device's logger already warned about bad parts
  const sink = options.sink;
  return new ServerLogger(typeof sink === "object" ? { ...options, sink: { ...sink, append: true } } : options);
}

/**
 * Makes the tuner of a device.
 *
 * @example A device's tuner that keeps its decisions in memory and logs them to stdout
 * ```ts
 * import { deviceTuner } from "./device_tuner.ts";
 * import type { DeviceProperties } from "../contract/types.ts";
 *
 * const props = {
 *   identity: { vendor: "nvidia", architecture: "hopper", description: "NVIDIA H200", device: "" },
 *   limits: {},
 *   features: { all: [] },
 * } as unknown as DeviceProperties;
 * const tuner = deviceTuner(props, { tuneCache: "memory", logger: { autotune: "basic", sink: "stdout" } });
 * console.log(tuner.store.description); // "memory"
 * ```
 *
 * @param props The device's properties (identity, limits, features).
 * @param options Where decisions persist and where the tuner reports.
 * @returns The tuner.
 * @throws {TypeError} For a `tuneCache` that names no store (see `createTuneStore`), or logger options with a
 * level or sink that is not one of its values.
 */
export function deviceTuner(props: DeviceProperties, options: DeviceTunerOptions = {}): Tuner {
  const logger = tunerLogger(options.logger);
  return new Tuner({
    store: createTuneStore(options.tuneCache),
    device: tuneDeviceKey({
      ...props.identity,
      limits: props.limits,
      features: props.features.all,
      runtime: `deno ${Deno.version.deno}`,
    }),
    log: (level, message) => {
      if (logger.autotune || level === "warn") logger.log("autotune", message);
    },
  });
}
