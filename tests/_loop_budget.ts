/**
 * The software adapter's loop limit, guarded for test kernels.
 *
 * Mesa's llvmpipe silently stops every invocation after 65535 loop iterations
 * in total (all loops of a shader together); the results are then wrong, with
 * no error. A test kernel with a loop is therefore defined with
 * `defineLoopKernel`, which takes the worst case of one invocation as a
 * function of the launch, and its launches go through `launchWithinBudget`,
 * which refuses any launch that could pass the limit. `loop_budget_test.ts`
 * fails when a test defines a kernel with a loop any other way.
 */

import { defineKernel, type Handle } from "../mod.ts";
import type { ComputeClient, Transport } from "../mod.ts";
import type { Kernel, KernelOptions } from "../mod.ts";

/** Loop iterations one llvmpipe invocation runs, in total, before it is silently stopped. */
export const LLVMPIPE_LOOP_LIMIT = 65535;

/** What a test kernel's loop count may depend on. */
export interface LoopLaunch {
  /** Workgroups along x, y and z. */
  readonly count: readonly [number, number, number];
  /** The info words as u32 (empty without info). */
  readonly info: Uint32Array;
}

/** A test kernel with loops and the worst case of one invocation. */
export interface LoopKernel {
  /** The kernel. */
  readonly kernel: Kernel;
  /** Loop iterations of one invocation, all loops together, at most (for a launch). */
  readonly iterations: (launch: LoopLaunch) => number;
}

/**
 * Defines a test kernel whose loops are bounded by `iterations`.
 *
 * @param options The kernel.
 * @param iterations The worst case of one invocation for a launch.
 * @returns The kernel and its bound.
 */
export function defineLoopKernel(options: KernelOptions, iterations: LoopKernel["iterations"]): LoopKernel {
  return { kernel: defineKernel(options), iterations };
}

/**
 * Throws when a launch of `k` could run past llvmpipe's loop limit.
 *
 * @param k The kernel and its bound.
 * @param count Workgroups.
 * @param info Info words, if any.
 * @returns The worst-case iterations of one invocation.
 */
export function checkLoopBudget(k: LoopKernel, count: readonly number[], info?: ArrayBufferView): number {
  const words = info === undefined
    ? new Uint32Array(0)
    : new Uint32Array(info.buffer, info.byteOffset, info.byteLength / 4);
  const launch: LoopLaunch = { count: [count[0] ?? 1, count[1] ?? 1, count[2] ?? 1], info: words };
  const n = k.iterations(launch);
  if (!(n <= LLVMPIPE_LOOP_LIMIT)) {
    throw new RangeError(
      `test kernel "${k.kernel.name}": a launch with count [${launch.count}] and info [${words}] runs up to ${n} loop iterations per invocation; llvmpipe silently stops at ${LLVMPIPE_LOOP_LIMIT}, so its results would be wrong: make the launch smaller`,
    );
  }
  return n;
}

/**
 * Launches `k` after checking its loop budget (see `checkLoopBudget`).
 *
 * @param client The client.
 * @param k The kernel and its bound.
 * @param count Workgroups.
 * @param buffers Bindings.
 * @param info Info words.
 */
export function launchWithinBudget(
  client: ComputeClient<Transport>,
  k: LoopKernel,
  count: readonly number[],
  buffers: readonly Handle[],
  info?: Uint32Array | Int32Array | Float32Array,
): void {
  checkLoopBudget(k, count, info);
  client.launch(k.kernel, count, buffers, info);
}
