/**
 * The one builder of the binding-size error, shared by the launch checks
 * that throw it (buffers, at the call) and the stream that queues it (info
 * words, at encoding). Internal: not re-exported by `errors.ts`.
 *
 * @module
 */

import { ResourceLimitError } from "./launch_errors.ts";

/**
 * The `ResourceLimitError` (`binding-size`) of a binding above
 * `maxStorageBufferBindingSize`.
 *
 * @param kernel The kernel's name.
 * @param where What was bound, e.g. `buffer 2` or `info`.
 * @param size Its bytes.
 * @param max The limit.
 * @returns The error.
 */
export function bindingSizeError(kernel: string, where: string, size: number, max: number): ResourceLimitError {
  return new ResourceLimitError(
    "binding-size",
    `launch(${kernel}) ${where}`,
    [size],
    [max],
    "maxStorageBufferBindingSize",
  );
}
