/**
 * The smallest programs that make Deno 2.9.6 abort in glibc at exit on this
 * machine's software stack, with no code of this project in them. Run by
 * `egl_thread_exit_abort_test.ts` (see there for the mechanism and the figures);
 * not a test of the suite (its name does not end in `_test.ts`).
 *
 * `deno test --allow-ffi tests/known_issues/egl_thread_exit_repro.ts -- <variant>`
 * runs the variant on a test thread, which is where the abort needs it to be;
 * `deno run --allow-ffi tests/known_issues/egl_thread_exit_repro.ts <variant>`
 * runs it on the main thread (the control, which does not abort).
 *
 * Variants:
 * - `egl`: no WebGPU at all. Loads libglvnd's `libEGL.so.1` through `dlopen`
 *   (kept loaded, as a driver stack keeps it), initialises and terminates a
 *   surfaceless Mesa display. That leaves this thread an EGL thread state.
 * - `egl-released`: the same, then `eglReleaseThread()`, which frees that state
 *   before the thread ends (the control that shows where the double free is).
 * - `webgpu-gl`: plain WebGPU, no runtime: opens and destroys a device (run it
 *   with `DENO_WEBGPU_BACKEND=gl`, or unset, since Deno then starts the GL
 *   backend beside Vulkan).
 *
 * @module
 */

/**
 * Opens libEGL with `RTLD_NODELETE` and initialises, then terminates, a surfaceless EGL display.
 *
 * @param release Also call `eglReleaseThread()`, which frees this thread's EGL state now instead of at thread exit.
 */
export function initEglDisplay(release = false): void {
  const libc = Deno.dlopen("libc.so.6", {
    dlopen: { parameters: ["buffer", "i32"], result: "pointer" },
    dlsym: { parameters: ["pointer", "buffer"], result: "pointer" },
  });
  try {
    const cstr = (s: string) => new TextEncoder().encode(s + "\0");
    const RTLD_NOW = 2;
    const RTLD_NODELETE = 0x1000;
    const egl = libc.symbols.dlopen(cstr("libEGL.so.1"), RTLD_NOW | RTLD_NODELETE);
    if (egl === null) throw new Error("libEGL.so.1 is not installed");
    const fn = <const D extends Deno.ForeignFunction>(name: string, def: D) => {
      const pointer = libc.symbols.dlsym(egl, cstr(name));
      if (pointer === null) throw new Error(`libEGL.so.1 has no ${name}`);
      return new Deno.UnsafeFnPointer(pointer as Deno.PointerObject<D>, def);
    };
    const getPlatformDisplay = fn("eglGetPlatformDisplay", {
      parameters: ["u32", "pointer", "pointer"],
      result: "pointer",
    });
    const initialize = fn("eglInitialize", { parameters: ["pointer", "pointer", "pointer"], result: "u32" });
    const terminate = fn("eglTerminate", { parameters: ["pointer"], result: "u32" });
    const releaseThread = fn("eglReleaseThread", { parameters: [], result: "u32" });
    const EGL_PLATFORM_SURFACELESS_MESA = 0x31dd;
    const display = getPlatformDisplay.call(EGL_PLATFORM_SURFACELESS_MESA, null, null);
    if (display === null || initialize.call(display, null, null) !== 1) throw new Error("eglInitialize failed");
    terminate.call(display);
    if (release) releaseThread.call();
  } finally {
    libc.close();
  }
}

/** Opens a WebGPU device and destroys it. */
export async function openWebGpuDevice(): Promise<void> {
  const adapter = await navigator.gpu.requestAdapter();
  if (adapter === null) throw new Error("no WebGPU adapter");
  const device = await adapter.requestDevice();
  device.destroy();
}

/** Runs one variant by name. */
export function runVariant(variant: string): Promise<void> | void {
  if (variant === "egl") return initEglDisplay();
  if (variant === "egl-released") return initEglDisplay(true);
  if (variant === "webgpu-gl") return openWebGpuDevice();
  throw new Error(`unknown variant ${variant} (egl, egl-released, webgpu-gl)`);
}

if (import.meta.main) {
  await runVariant(Deno.args[0] ?? "egl"); // the control: on the main thread
} else {
  Deno.test(`known issue repro (${Deno.args[0] ?? "egl"}) runs on a test thread`, () =>
    runVariant(Deno.args[0] ?? "egl"));
}
