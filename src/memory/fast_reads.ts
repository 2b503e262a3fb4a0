/**
 * Fast reads: whether read-backs of a device map their staging buffers early
 * (see `readback_pool.ts`), and the guards that decide it.
 *
 * The early path depends on two behaviours of Deno 2.9's WebGPU
 * (deno-webgpu.md §1): `mapAsync()` polls the device until the mapping is
 * complete before it returns (its promise then waits a fixed 10 ms more), and
 * `getMappedRange` does not check that the promise has settled. A Deno that
 * changed either could return stale bytes or throw, so fast reads are opt-in
 * (`createClient({ fastReads: true })`) and guarded:
 *
 * - only on Deno 2.9.x, where it was verified; elsewhere one warning names the
 *   version and reads take the spec path;
 * - a self-test when the client starts: two rounds of canary bytes, each
 *   written on the device and copied into a primed staging buffer, then read
 *   early and compared byte for byte; any mismatch or exception turns fast
 *   reads off with a warning saying why;
 * - a third round copies into the first buffer again while the leftover of
 *   its early map is pending, under a validation error scope, and reads it
 *   early: when every byte matches and no error is raised, staging buffers
 *   are reused without waiting for their leftovers (`reuse`), so a steady loop
 *   of reads needs a few buffers and never waits; otherwise each buffer rests
 *   until its leftover settles, as before;
 * - at run time, an early range that cannot be read turns them off for the
 *   device (with a warning) and the read is redone through the spec path.
 *
 * @module
 */

import { ReadbackBuffer } from "./readback_pool.ts";
import { describeError } from "../_util/describe.ts";

/** Deno versions on which early maps were verified. */
const VERIFIED = /^2\.9\./;
/** Bytes of each self-test canary. */
const CANARY = 1024;

/** Whether a device's read-backs map early, and why not when they do not. */
export class FastReads {
  #active = false;
  #reuse = false;
  #reason = "not requested (the default is the spec path: each read waits for Deno's mapAsync)";
  #warn: (message: string) => void;

  /**
   * Creates the instance, off.
   *
   * @param warn Where warnings go. @default console.warn
   */
  constructor(warn: (message: string) => void = (m) => console.warn(m)) {
    this.#warn = warn;
  }

  /** True while read-backs map early. */
  get active(): boolean {
    return this.#active;
  }

  /**
   * True when a staging buffer may be mapped early again before the leftover
   * of its last early map settles (the self-test's third round passed).
   */
  get reuse(): boolean {
    return this.#active && this.#reuse;
  }

  /** Why fast reads are off (or, while on, what verified them). */
  get reason(): string {
    return this.#reason;
  }

  /**
   * Turns fast reads on when they were asked for, Deno is a verified version
   * and the self-test passes; says why otherwise.
   *
   * @param device The device.
   * @param requested The client's `fastReads` option.
   * @param deno The Deno version. @default Deno.version.deno
   */
  async start(device: GPUDevice, requested: boolean | undefined, deno: string = Deno.version.deno): Promise<void> {
    if (requested !== true) return;
    if (!VERIFIED.test(deno)) {
      this.#off(`early maps were verified on Deno 2.9.x only, and this is Deno ${deno}`);
      return;
    }
    const { failure, reuse } = await selfTest(device);
    if (failure !== null) {
      this.#off(`the self-test failed: ${failure}`);
      return;
    }
    this.#active = true;
    this.#reuse = reuse === null;
    this.#reason = `on: Deno ${deno}, self-test passed (canary bytes read early, byte for byte); ${
      reuse === null
        ? "staging buffers are reused before their leftover maps settle (verified)"
        : `staging buffers rest until their leftover maps settle (reuse failed: ${reuse})`
    }`;
  }

  /**
   * Turns fast reads off for good (an early range failed at run time).
   *
   * @param reason What failed.
   */
  disable(reason: string): void {
    if (!this.#active) return;
    this.#active = false;
    this.#off(reason);
  }

  #off(reason: string): void {
    this.#reason = reason;
    this.#warn(`[denogpu] fastReads is off: ${reason}; reads use the spec path`);
  }
}

/**
 * Reads canary bytes through two primed staging buffers early, one round
 * each, after writing them on the device; then through the first buffer
 * again while its leftover map is pending (the reuse check).
 *
 * @returns `failure`: null when every byte of the first two rounds matched,
 * else what went wrong; `reuse`: null when the third round read right with
 * no validation error, else what went wrong.
 */
async function selfTest(device: GPUDevice): Promise<{ failure: string | null; reuse: string | null }> {
  const src = device.createBuffer({
    label: "fast reads self-test source",
    size: CANARY,
    usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const policy = { reuseCooling: false }; // true for the reuse check only
  const staging = [0, 1].map((i) => new ReadbackBuffer(device, CANARY, `fast reads self-test readback ${i}`, policy));
  /** Writes round `round`'s canary, copies it into `b`, maps `b` early and compares; null when it matched. */
  const round = (b: ReadbackBuffer, round: number): string | null => {
    const canary = Uint8Array.from({ length: CANARY }, (_, i) => (i * 31 + round * 97 + 7) & 255);
    device.queue.writeBuffer(src, 0, canary);
    const encoder = device.createCommandEncoder({ label: "fast reads self-test" });
    encoder.copyBufferToBuffer(src, 0, b.buffer, 0, CANARY);
    device.queue.submit([encoder.finish()]);
    if (b.map(CANARY, true) !== null) return "a primed staging buffer was not mapped early";
    const got = new Uint8Array(b.buffer.getMappedRange(0, CANARY).slice(0));
    b.unmap();
    const at = got.findIndex((v, i) => v !== canary[i]);
    return got.length !== CANARY || at >= 0
      ? `round ${round + 1}: byte ${at} read ${got[at]}, expected ${canary[at]}`
      : null;
  };
  try {
    // Prime: one awaited map cycle each (an early map of a buffer never mapped panics Deno).
    await Promise.all(staging.map((b) => b.map(CANARY, false)));
    for (const b of staging) b.unmap();
    for (let r = 0; r < 2; r++) {
      const failure = round(staging[r]!, r);
      if (failure !== null) return { failure, reuse: "not tried" };
    }
    policy.reuseCooling = true;
    return { failure: null, reuse: await reuseCheck(device, staging[0]!, (b) => round(b, 2)) };
  } catch (e) {
    return { failure: `it threw ${describeError(e)}`, reuse: "not tried" };
  } finally {
    src.destroy();
    for (const b of staging) b.destroy(); // each when its early maps settle
  }
}

/**
 * The reuse check: one more round through `first` while the leftover of its
 * early map is pending (it settles ~10 ms after that map), under a
 * validation error scope.
 *
 * @returns Null when the round read right with no validation error, else what went wrong.
 */
async function reuseCheck(
  device: GPUDevice,
  first: ReadbackBuffer,
  round: (b: ReadbackBuffer) => string | null,
): Promise<string | null> {
  if (!first.cooling) return "its leftover had settled already: nothing was checked";
  try {
    device.pushErrorScope("validation");
    const wrong = round(first);
    const error = await device.popErrorScope();
    return wrong ?? (error === null ? null : `a validation error: ${error.message}`);
  } catch (e) {
    return `it threw ${describeError(e)}`;
  }
}
