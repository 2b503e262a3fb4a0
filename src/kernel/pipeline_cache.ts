/**
 * Compiled pipelines per kernel, keyed by the kernel's stable id and the shape
 * of its bind group (number of buffers, info words or not).
 *
 * Compilation runs inside a validation error scope. Deno resolves
 * `popErrorScope` on the next microtask, so a fresh entry is `pending` until
 * then; the stream keeps the dispatches of pending entries in their own command
 * buffers, so a kernel that fails to compile cannot take valid work down with
 * it. Failed entries are dropped from the cache: every later launch of the same
 * broken kernel compiles, and fails, again.
 *
 * @module
 */

import { CompilationError, type ServerError } from "../errors.ts";
import type { ServerLogger } from "../logger.ts";
import type { Kernel } from "../contract/kernel.ts";

/** Validation state of a compiled pipeline. */
export type PipelineState = "pending" | "valid" | "failed";

/** One compiled pipeline. */
export interface PipelineEntry {
  /** The kernel. */
  readonly kernel: Kernel;
  /** The compute pipeline (invalid when `state` is `failed`). */
  readonly pipeline: GPUComputePipeline;
  /** Its bind group layout. */
  readonly layout: GPUBindGroupLayout;
  /** Small integer naming the layout, used in bind group cache keys. */
  readonly layoutId: number;
  /** Storage buffers bound before the info binding. */
  readonly buffers: number;
  /** True when the last binding holds info words. */
  readonly info: boolean;
  /** True when the info words are bound as a uniform buffer (the kernel declares that binding `var<uniform>`). */
  readonly uniformInfo: boolean;
  /** Validation state. */
  state: PipelineState;
  /** The failure, once known. */
  error: ServerError | null;
  /** Settles when the state is known. */
  readonly checked: Promise<void>;
  /** Internal: the last resolved bindings of a launch, owned by the stream layer. */
  memo: object | null;
}

/** Pipelines and bind group layouts of one device. */
export class PipelineCache {
  #device: GPUDevice;
  #entries = new Map<string, (PipelineEntry | undefined)[]>();
  #modules = new Map<string, GPUShaderModule>();
  #layouts: GPUBindGroupLayout[] = [];
  #compiled = 0;
  #logger: ServerLogger;

  /**
   * Creates the instance. Device limits are not checked here: the launch
   * door (`checkLaunch`) refuses a kernel that does not fit the device at the
   * call, before any pipeline is made.
   *
   * @param device The device.
   * @param logger Receives compilation logs.
   */
  constructor(device: GPUDevice, logger: ServerLogger) {
    this.#device = device;
    this.#logger = logger;
  }

  /** Number of pipelines compiled so far (failed ones included). */
  get compiled(): number {
    return this.#compiled;
  }

  /**
   * Forgets every pipeline (server teardown): kernels stop pointing at this
   * cache and entries drop their launch memos, so module-level kernels do
   * not keep a destroyed server's streams alive.
   */
  release(): void {
    for (const list of this.#entries.values()) {
      for (const entry of list) {
        if (entry === undefined) continue;
        entry.memo = null;
        if (entry.kernel.compiled.owner === this) entry.kernel.compiled = { owner: null, slots: [] };
      }
    }
    this.#entries.clear();
    this.#modules.clear();
  }

  /**
   * Returns the cached entry, compiling it on a miss.
   *
   * @param kernel The kernel.
   * @param buffers Storage buffers bound.
   * @param info Whether an info binding follows them.
   * @returns The entry (possibly `pending`).
   */
  get(kernel: Kernel, buffers: number, info: boolean): PipelineEntry {
    const slot = buffers * 2 + (info ? 1 : 0);
    const compiled = kernel.compiled;
    if (compiled.owner === this) {
      const fast = compiled.slots[slot];
      if (fast !== undefined) return fast as PipelineEntry;
    }
    const list = this.#entries.get(kernel.id);
    if (list !== undefined) kernel.compiled = { owner: this, slots: list };
    const hit = list?.[slot];
    if (hit !== undefined) return hit;
    return this.#compile(kernel, buffers, info, slot);
  }

  #layoutFor(buffers: number, info: boolean, uniform: boolean): number {
    const id = buffers * 3 + (info ? (uniform ? 2 : 1) : 0);
    if (this.#layouts[id] === undefined) {
      const entries: GPUBindGroupLayoutEntry[] = [];
      for (let i = 0; i < buffers; i++) {
        entries.push({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } });
      }
      if (info) {
        entries.push({
          binding: buffers,
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type: uniform ? "uniform" : "read-only-storage", hasDynamicOffset: true },
        });
      }
      const label = `layout ${buffers} buffers${info ? (uniform ? " + uniform info" : " + info") : ""}`;
      this.#layouts[id] = this.#device.createBindGroupLayout({ label, entries });
    }
    return id;
  }

  #compile(kernel: Kernel, buffers: number, info: boolean, slot: number): PipelineEntry {
    const device = this.#device;
    const uniformInfo = info && kernel.layout.bindingKinds[buffers] === "uniform";
    const layoutId = this.#layoutFor(buffers, info, uniformInfo);
    const bgl = this.#layouts[layoutId]!;
    // Each pipeline gets its own pipeline layout (over the shared bind group
    // layout): Deno 2.9's wgpu does not refresh the minimum binding sizes it
    // checks when the pass switches between pipelines of one layout object
    // (gfx-rs/wgpu#7359), so kernels whose info structs differ in size would
    // fail validation back to back. Bind groups stay compatible: the bind
    // group layout is the same object.
    const pl = device.createPipelineLayout({ label: `kernel ${kernel.name} layout`, bindGroupLayouts: [bgl] });
    device.pushErrorScope("validation");
    device.pushErrorScope("internal");
    // The source compiled differs with info words: their binding is read-only (see kernel.ts).
    const moduleKey = info ? `${kernel.id}+info` : kernel.id;
    const code = kernel.compiledWgsl(info);
    let module = this.#modules.get(moduleKey);
    if (module === undefined) {
      module = device.createShaderModule({ label: `kernel ${kernel.name}`, code });
      this.#modules.set(moduleKey, module);
    }
    const pipeline = device.createComputePipeline({
      label: `kernel ${kernel.name} (${buffers} buffers${info ? " + info" : ""})`,
      layout: pl,
      compute: {
        module,
        entryPoint: kernel.entryPoint,
        ...(Object.keys(kernel.constants).length ? { constants: { ...kernel.constants } } : {}),
      },
    });
    this.#compiled++;
    if (this.#logger.compilation) {
      this.#logger.log(
        "compilation",
        this.#logger.compilationFull
          ? `compiled ${kernel.name} (${kernel.id}, ${buffers} buffers${info ? " + info" : ""}):\n${code}`
          : `compiled ${kernel.name}`,
      );
    }
    const internal = device.popErrorScope();
    const validation = device.popErrorScope();
    const entry: PipelineEntry = {
      kernel,
      pipeline,
      layout: bgl,
      layoutId,
      buffers,
      info,
      uniformInfo,
      state: "pending",
      error: null,
      memo: null,
      checked: Promise.all([validation, internal]).then(([v, i]) => {
        const err = v ?? i;
        if (err === null) entry.state = "valid";
        else this.#fail(entry, slot, new CompilationError(kernel.name, err.message, { cause: err }));
      }, (cause) => this.#fail(entry, slot, new CompilationError(kernel.name, String(cause), { cause }))),
    };
    let list = this.#entries.get(kernel.id);
    if (list === undefined) this.#entries.set(kernel.id, list = []);
    list[slot] = entry;
    kernel.compiled = { owner: this, slots: list };
    return entry;
  }

  /** Marks `entry` failed and forgets it (and its module): failed compilations are not cached. */
  #fail(entry: PipelineEntry, slot: number, error: CompilationError): void {
    entry.state = "failed";
    entry.error = error;
    const id = entry.kernel.id;
    const list = this.#entries.get(id);
    if (list?.[slot] === entry) list[slot] = undefined;
    this.#modules.delete(entry.info ? `${id}+info` : id);
  }
}
