/**
 * The error hierarchy of the runtime, mirroring CubeCL's `ServerError`,
 * `LaunchError`, `IoError`, `ProfileError` and `ResourceLimitError`.
 *
 * Two kinds of failure exist, and they surface in different places:
 *
 * - **Argument errors** (wrong types, out-of-range sizes, released handles,
 *   unknown streams or graphs) throw at once from the call that received them,
 *   as `TypeError`, `RangeError` or one of the classes exported here.
 * - **Device-side failures** of `launch`, `write` and `replay` never throw from
 *   those calls. They are queued on the stream and raised, all together, by the
 *   next `flush`, `sync`, `read`, profile or capture call on that stream as a
 *   {@linkcode ServerUnhealthyError}.
 *
 * @module
 */

export * from "./errors/server_errors.ts";
export * from "./errors/launch_errors.ts";
export * from "./errors/memory_errors.ts";
export * from "./errors/stream_errors.ts";
export * from "./errors/kernel_errors.ts";
export * from "./errors/collective_errors.ts";
