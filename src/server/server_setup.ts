/**
 * Setting a server up from its options and the device's properties: the
 * checks of the options, the settings every stream runs with, the device
 * context (caches and logger), the utilities shared with clients, the empty
 * stream slots, and the helpers the server routes its calls to; and the error
 * a lost device becomes.
 *
 * @module
 */

import { oneOf } from "../_util/one_of.ts";
import { DeviceLostError } from "../errors.ts";
import { GraphRegistry } from "./graph_registry.ts";
import { BindGroupCache } from "../kernel/bind_group_cache.ts";
import { PipelineCache } from "../kernel/pipeline_cache.ts";
import { ServerLogger } from "../logger.ts";
import { HostStagingPool } from "../memory/host_staging.ts";
import { resolveMemoryConfiguration } from "../memory/memory_config.ts";
import { deviceTuner } from "../tune/device_tuner.ts";
import type { Tuner } from "../tune/tuner.ts";
import { ContiguousLayoutPolicy } from "../memory/layout_policy.ts";
import { DeviceContext } from "../stream/device_context.ts";
import type { ServerUtilities } from "../contract/compute_server.ts";
import { DrainingCalls } from "./draining_calls.ts";
import { LaunchPath } from "./launch_path.ts";
import { HostTransfers } from "./host_transfers.ts";
import { ServerMemory } from "./server_memory.ts";
import { DEFAULT_TASKS_MAX, type ServerOptions } from "../options/server_options.ts";
import { type StreamHost, StreamSlots } from "./stream_slots.ts";
import type { DeviceProperties } from "../contract/types.ts";
import { infoOffsetAlignment, launchLimits } from "../contract/launch_checks.ts";
import type { OwnerResolver } from "../stream/_stream_parts.ts";
import { describe } from "../_util/describe.ts";

/** What a server is set up from. */
export interface ServerSetupOptions {
  /** The server being set up: its helpers check the device and look streams up through it. */
  server: StreamHost;
  /** The device. */
  device: GPUDevice;
  /** Its properties. */
  properties: DeviceProperties;
  /** The server's options. */
  options: ServerOptions;
}

/** The parts of a server built by `setUpServer`. */
export interface ServerSetup {
  /** The device context: queue, caches, settings and logger. */
  readonly ctx: DeviceContext;
  /** What the server shares with clients. */
  readonly utilities: ServerUtilities;
  /** The stream slots, all empty. */
  readonly slots: StreamSlots;
  /** True when every launch is logged (full launch logs, or minimal profiling logs). */
  readonly logLaunch: boolean;
  /** Host staging memory lent by `staging()`. */
  readonly hostStaging: HostStagingPool;
  /** Reads, writes, host staging and raw ranges. */
  readonly transfers: HostTransfers;
  /** Memory reservation and administration of the streams. */
  readonly memory: ServerMemory;
  /** Flush, sync, profile and capture boundaries. */
  readonly drains: DrainingCalls;
  /** The captured graphs. */
  readonly graphs: GraphRegistry;
  /** The device's autotuner: decisions per device, persisted in the `tuneCache` store. */
  readonly tuner: Tuner;
  /** The launch path, which every launch passes (its door checks against the device's limits). */
  readonly path: LaunchPath;
}

/**
 * Checks the options and builds the parts of a server on a device. Streams
 * resolve bindings of other streams through `server.stream`.
 *
 * @param setup The server, the device, its properties and the options.
 * @returns The device context, utilities, stream slots, launch logging flag
 * and the server's helpers.
 * @throws {RangeError} When `tasksMax` or `maxStreams` is not a positive integer.
 * @throws {TypeError} When `openPassAhead` or `fastReads` is not a boolean, or `timing`,
 * `persistentMemory` or a `logger` level or sink is not one of its values.
 * @throws {PoolConfigError} When the `memory` layout is invalid for the device.
 */
export function setUpServer(setup: ServerSetupOptions): ServerSetup {
  const { server, device, properties: props, options } = setup;
  const tasksMax = options.tasksMax ?? DEFAULT_TASKS_MAX;
  const maxStreams = options.maxStreams ?? 128;
  if (!Number.isSafeInteger(tasksMax) || tasksMax < 1) {
    throw new RangeError(`createClient: tasksMax must be a positive integer, got ${tasksMax}`);
  }
  const openPassAhead = options.openPassAhead ?? !props.identity.isFallbackAdapter;
  if (typeof openPassAhead !== "boolean") {
    throw new TypeError(`createClient: openPassAhead must be a boolean, got ${describe(openPassAhead)}`);
  }
  if (options.fastReads !== undefined && typeof options.fastReads !== "boolean") {
    throw new TypeError(`createClient: fastReads must be a boolean, got ${describe(options.fastReads)}`);
  }
  if (!Number.isSafeInteger(maxStreams) || maxStreams < 1) {
    throw new RangeError(`createClient: maxStreams must be a positive integer, got ${maxStreams}`);
  }
  oneOf("timing", options.timing, TIMINGS);
  oneOf("persistentMemory", options.persistentMemory, PERSISTENT_POLICIES);
  const pools = resolveMemoryConfiguration(options.memory ?? "compact", props.memory);
  const persistentMemory = options.persistentMemory ?? "enabled";
  const logger = options.logger !== undefined ? new ServerLogger(options.logger) : ServerLogger.fromEnv();
  const deviceTiming = props.features.timestampQuery && options.timing !== "system";
  const logLaunch = logger.launchesFull || logger.profiling === "minimal";
  const ctx = new DeviceContext({
    device,
    bindGroups: new BindGroupCache(device),
    pipelines: new PipelineCache(device, logger),
    settings: {
      tasksMax,
      openPassAhead,
      maxStreams,
      storageOffsetAlignment: props.limits.minStorageBufferOffsetAlignment ?? 256,
      infoOffsetAlignment: infoOffsetAlignment(props),
      alignment: props.memory.alignment,
      maxBufferSize: props.memory.maxBufferSize,
      maxBindingSize: props.memory.maxPageSize,
      uploadChunkThreshold: 8 * 1024 * 1024,
      uploadChunkSize: 4 * 1024 * 1024,
    },
    logger,
  });
  const utilities = { properties: props, logger, layoutPolicy: new ContiguousLayoutPolicy(props.memory.alignment) };
  const resolve: OwnerResolver = (binding) => server.stream(binding.stream).memory.resolve(binding.memory);
  const slots = new StreamSlots({ ctx, pools, persistentMemory, deviceTiming, resolveOwner: resolve });
  const hostStaging = new HostStagingPool();
  const graphs = new GraphRegistry(device, ctx.settings.infoOffsetAlignment, ctx.countCopier);
  return {
    ctx,
    utilities,
    slots,
    logLaunch,
    hostStaging,
    transfers: new HostTransfers({ server, ctx, resolve, hostStaging }),
    memory: new ServerMemory({ server, logger, slots, memory: props.memory, hostStaging }),
    drains: new DrainingCalls({ server, ctx, graphs, slots }),
    graphs,
    path: new LaunchPath({
      ctx,
      streams: slots.streams,
      streamOf: (id) => server.stream(id),
      limits: launchLimits(server, props),
      logLaunch,
    }),
    tuner: deviceTuner(props, { tuneCache: options.tuneCache, logger }),
  };
}

const TIMINGS = ["device", "system"];
const PERSISTENT_POLICIES = ["enabled", "size-match", "disabled", "enforced"];

/**
 * The error a lost device becomes, raised by every later call.
 *
 * @param info What `device.lost` resolved with.
 * @returns A `DeviceLostError` with reason `destroyed` or `unknown`.
 */
export function deviceLostError(info: GPUDeviceLostInfo): DeviceLostError {
  return new DeviceLostError(
    info.reason === "destroyed"
      ? "the device was destroyed; create a new client to continue"
      : `the device was lost (${info.message}); create a new client to continue`,
    { reason: info.reason === "destroyed" ? "destroyed" : "unknown" },
  );
}
