/**
 * One warning, where it helps: a process in which several Workers held
 * WebGPU devices hangs at exit now and then on NVIDIA when Deno started every
 * backend (`DENO_WEBGPU_BACKEND` unset, so GL/EGL too, in every Worker
 * thread). On an H100 (Deno 2.9.6, driver 580.159.04) three Workers with
 * devices hung in 6 of 24 processes with it unset and in 0 of 24 with
 * `DENO_WEBGPU_BACKEND=vulkan`; three worker clients after an all-reduce hung
 * in 7 of 40 unset and 0 of 50 with Vulkan (`bench/RESULTS.md`, run 34).
 *
 * The variable is read only where Deno already grants it (no prompt); Deno
 * reads it when a thread first asks for an adapter, so the runtime cannot set
 * it for the user.
 *
 * @module
 */

import { envGranted, readGrantedEnv } from "../../_util/granted_env.ts";

/** What `adviseBackend` looks at (the real process by default; tests pass their own). */
export interface BackendProbe {
  /** `Deno.build.os`. */
  readonly os: string;
  /** The variable's value, undefined when unset, or null when it may not be read without asking. */
  backend(): string | undefined | null;
  /** Where the warning goes. */
  warn(message: string): void;
}

const VARIABLE = "DENO_WEBGPU_BACKEND";

const processProbe: BackendProbe = {
  os: Deno.build.os,
  backend: () => envGranted(VARIABLE) ? readGrantedEnv(VARIABLE) : null,
  warn: (m) => console.warn(m),
};

/** The advice, as printed. */
export const BACKEND_ADVICE = "[denogpu] several worker clients in one process with DENO_WEBGPU_BACKEND unset: on " +
  "NVIDIA such processes hung at exit now and then (7 of 40 runs of three worker clients on an H100), and none did " +
  "with DENO_WEBGPU_BACKEND=vulkan (0 of 250); set it on Linux (the README's known issues say more)";

/** Counts the Workers with devices this process started, and warns once when it helps. */
export class BackendAdvice {
  #started = 0;
  #done = false;
  #probe: BackendProbe;

  /**
   * Creates the instance.
   *
   * @param probe What it looks at. @default the real process
   */
  constructor(probe: BackendProbe = processProbe) {
    this.#probe = probe;
  }

  /**
   * Notes one more Worker with a device; from the second on, on Linux, warns
   * once when `DENO_WEBGPU_BACKEND` is readable and unset.
   *
   * @returns True when it warned now.
   */
  started(): boolean {
    if (++this.#started < 2 || this.#done || this.#probe.os !== "linux") return false;
    const backend = this.#probe.backend();
    if (backend === null) return false;
    this.#done = true;
    if (backend !== undefined && backend !== "") return false;
    this.#probe.warn(BACKEND_ADVICE);
    return true;
  }
}

/** The process's advice. */
export const backendAdvice: BackendAdvice = new BackendAdvice();
