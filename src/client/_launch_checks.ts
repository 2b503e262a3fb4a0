/**
 * Launch argument checks: the counts, handles, info words and mode of a
 * `client.launch`, checked on the launch path into one reused `LaunchArgs`
 * (nothing allocated per launch), and the slow path that builds the precise
 * error.
 *
 * @module
 */

import { ResourceLimitError } from "../errors.ts";
import { Kernel } from "../kernel/kernel.ts";
import { Handle } from "../server/handle.ts";
import type { CubeCount, LaunchMode } from "../server/types.ts";
import type { WebGpuServer } from "../server/webgpu_server.ts";
import type { InfoWords } from "../stream/info_arena.ts";
import { checkHandle } from "./_handle_checks.ts";
import type { LaunchCount, LaunchOptions } from "./client_types.ts";

/** One client's checked launch arguments, overwritten by each `check`. */
export class LaunchArgs {
  /** Workgroups along x (1 with an indirect count). */
  x = 1;
  /** Workgroups along y. */
  y = 1;
  /** Workgroups along z. */
  z = 1;
  /** The handle holding the counts, or null. */
  indirect: Handle | null = null;
  /** Info words, or null when none (or an empty array) were given. */
  words: InfoWords | null = null;
  /** The launch mode. */
  mode: LaunchMode = "execute";
  #server: WebGpuServer;
  #maxCount: number;
  #maxBinding: number;
  #storageAlign: number;

  /**
   * Creates the instance.
   *
   * @param server The client's server (its limits, and the owner its handles must have).
   */
  constructor(server: WebGpuServer) {
    this.#server = server;
    this.#maxCount = server.properties.hardware.maxCubeCount[0];
    this.#maxBinding = server.properties.memory.maxPageSize;
    this.#storageAlign = server.properties.limits.minStorageBufferOffsetAlignment ?? 256;
  }

  /**
   * Checks a launch's arguments and stores the resolved ones in this object.
   *
   * @param kernel The kernel.
   * @param count Workgroups: `[x, y?, z?]`, a `CubeCount`, or a handle holding three u32.
   * @param buffers Handles bound at bindings `0..n`.
   * @param info Info words, if any.
   * @param options Launch options, if any.
   * @throws {TypeError} For a wrong kernel, handle, info or mode, or a
   * binding count that does not match the kernel's declarations.
   * @throws {RangeError} For a bad count or a view at an unaligned offset.
   * @throws {ResourceLimitError} When a count or binding exceeds a device limit.
   */
  check(
    kernel: Kernel,
    count: LaunchCount,
    buffers: readonly Handle[],
    info: InfoWords | undefined,
    options: LaunchOptions | undefined,
  ): void {
    const server = this.#server;
    if (!(kernel instanceof Kernel)) throw new TypeError("launch: kernel must come from defineKernel()");
    let x = 1;
    let y = 1;
    let z = 1;
    let indirect: Handle | null = null;
    if (Array.isArray(count)) {
      const n = count.length;
      x = count[0];
      if (n > 1) {
        y = count[1];
        if (n > 2) z = count[2];
      }
      const max = this.#maxCount;
      // `v >>> 0 === v` accepts exactly the integers 0..2^32-1.
      if (
        n < 1 || n > 3 || (x >>> 0) !== x || (y >>> 0) !== y || (z >>> 0) !== z || x > max || y > max || z > max
      ) badCount(kernel, count, max);
    } else if (count instanceof Handle) {
      indirect = this.#checkIndirect(count, kernel);
    } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "static") {
      const c = count as { x: number; y: number; z: number };
      x = c.x;
      y = c.y;
      z = c.z;
      badCount(kernel, [x, y, z], this.#maxCount, true);
    } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "dynamic") {
      indirect = this.#checkIndirect((count as { binding: unknown }).binding as Handle, kernel);
    } else {
      throw new TypeError(`launch(${kernel.name}): count must be [x, y, z], a CubeCount or a Handle`);
    }
    if (!Array.isArray(buffers)) throw new TypeError(`launch(${kernel.name}): buffers must be an array of Handle`);
    const nb = buffers.length;
    const maxBinding = this.#maxBinding;
    const alignMask = this.#storageAlign - 1; // WebGPU offset alignments are powers of two
    for (let i = 0; i < nb; i++) {
      const b = buffers[i];
      if (!(b instanceof Handle) || b.owner !== server) checkHandle(server, b, `launch(${kernel.name}) buffer ${i}`);
      if ((b.offsetStart & alignMask) !== 0) {
        throw new RangeError(
          `launch(${kernel.name}) buffer ${i}: a view bound to a kernel must start at a multiple of minStorageBufferOffsetAlignment (${this.#storageAlign} B); memory ${b.memory.id} is viewed from byte ${b.offsetStart}`,
        );
      }
      if (b.size - b.offsetStart - b.offsetEnd > maxBinding) {
        throw new ResourceLimitError(
          "binding-size",
          `launch(${kernel.name}) buffer ${i}`,
          [b.sizeInUse],
          [maxBinding],
          "maxStorageBufferBindingSize",
        );
      }
    }
    let words: InfoWords | null = null;
    if (info !== undefined && info !== null) {
      if (!(info instanceof Uint32Array || info instanceof Float32Array || info instanceof Int32Array)) {
        throw new TypeError(`launch(${kernel.name}): info must be a Uint32Array, Int32Array or Float32Array`);
      }
      if (info.length > 0) words = info;
    }
    const declared = kernel.layout.bindings;
    if (declared !== null && declared !== nb + (words === null ? 0 : 1)) badArity(kernel, nb, words !== null);
    let mode: LaunchMode = "execute";
    if (options !== undefined) {
      mode = options.mode ?? "execute";
      if (mode !== "execute" && mode !== "skip") {
        throw new TypeError(`launch(${kernel.name}): mode must be "execute" or "skip"`);
      }
    }
    this.x = x;
    this.y = y;
    this.z = z;
    this.indirect = indirect;
    this.words = words;
    this.mode = mode;
  }

  #checkIndirect(h: Handle, kernel: Kernel): Handle {
    const handle = checkHandle(this.#server, h, `launch(${kernel.name}) indirect count`);
    if (handle.sizeInUse < 12) {
      throw new RangeError(
        `launch(${kernel.name}): an indirect count needs 12 bytes (three u32), memory ${handle.memory.id} has ${handle.sizeInUse}`,
      );
    }
    return handle;
  }
}

/**
 * Throws the error a bad static count deserves (or returns when `onlyIfBad` and it is fine).
 *
 * @param kernel The kernel.
 * @param count The count as given.
 * @param max `maxComputeWorkgroupsPerDimension`.
 * @param onlyIfBad Return instead of throwing when the count is valid.
 */
export function badCount(kernel: Kernel, count: readonly number[], max: number, onlyIfBad = false): void {
  if (count.length < 1 || count.length > 3) {
    throw new RangeError(`launch(${kernel.name}): count must have 1 to 3 entries, got ${count.length}`);
  }
  const [x, y = 1, z = 1] = count;
  if (![x, y, z].every((v) => Number.isSafeInteger(v) && v! >= 0)) {
    throw new RangeError(`launch(${kernel.name}): workgroup counts must be non-negative integers, got [${count}]`);
  }
  if (x! > max || y > max || z > max) {
    throw new ResourceLimitError(
      "cube-count",
      `launch(${kernel.name})`,
      [x!, y, z],
      [max, max, max],
      "maxComputeWorkgroupsPerDimension",
    );
  }
  if (!onlyIfBad) throw new Error("unreachable: count was valid");
}

/**
 * Throws the error a binding count that does not match the kernel deserves.
 *
 * @param kernel The kernel.
 * @param buffers Buffers bound.
 * @param info Whether info words were given.
 */
export function badArity(kernel: Kernel, buffers: number, info: boolean): never {
  throw new TypeError(
    `launch(${kernel.name}): the kernel declares ${kernel.layout.bindings} bindings in @group(0) but the launch binds ${buffers} buffer${
      buffers === 1 ? "" : "s"
    }${info ? " plus info words" : " and no info words"}`,
  );
}
