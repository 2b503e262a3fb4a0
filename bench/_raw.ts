/**
 * The raw WebGPU side of the benches: bind group layouts, pipelines and bind
 * groups made directly on the device, without the runtime, for the baselines
 * the runtime is measured against, and the raw dispatch loop both graph
 * benches time (`encodeAlternating`); every other timed loop stays in its
 * bench file. Also the two pieces of method the benches share: the idle wait
 * between timed iterations (`blockUntilIdle`) and the shuffled interleaving
 * of the diagnostic scripts (`interleave`); and the two kernels the launch
 * benches share.
 */

/** The one-buffer kernel the launch benches time: `x[0] += 1`. */
export const TINY_WGSL = `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }`;

/** Four storage buffers and an info binding, as users launch: `d[0] = a[0] + b[0] + c[0] + info[0]`. */
export const FOUR_BUFFERS_INFO_WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<u32>;
@group(0) @binding(3) var<storage, read_write> d: array<u32>;
@group(0) @binding(4) var<storage, read> info: array<u32>;
@compute @workgroup_size(1) fn main() { d[0] = a[0] + b[0] + c[0] + info[0]; }`;

/**
 * A bind group layout of `buffers` read-write storage buffers at bindings 0,
 * 1, …, plus, with `dynamicInfo`, a read-only storage buffer with a dynamic
 * offset after them (info words in an arena), or with `staticInfo` one
 * without (info words bound in place).
 */
export function storageLayout(
  device: GPUDevice,
  buffers: number,
  options: { dynamicInfo?: boolean; staticInfo?: boolean; label?: string } = {},
): GPUBindGroupLayout {
  const entries: GPUBindGroupLayoutEntry[] = [];
  for (let i = 0; i < buffers; i++) {
    entries.push({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } });
  }
  if (options.dynamicInfo || options.staticInfo) {
    entries.push({
      binding: buffers,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: "read-only-storage", hasDynamicOffset: options.dynamicInfo === true },
    });
  }
  return device.createBindGroupLayout({ label: options.label, entries });
}

/**
 * Compute pipelines of WGSL sources (entry point `main`), in order, all on one
 * pipeline layout made of `layout`.
 */
export function rawPipelines<const T extends readonly string[]>(
  device: GPUDevice,
  layout: GPUBindGroupLayout,
  sources: T,
  label?: string,
): { -readonly [K in keyof T]: GPUComputePipeline } {
  const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
  return sources.map((code) =>
    device.createComputePipeline({
      label,
      layout: pipelineLayout,
      compute: { module: device.createShaderModule({ code }), entryPoint: "main" },
    })
  ) as { -readonly [K in keyof T]: GPUComputePipeline };
}

/** A bind group of buffers (whole, or ranges of them) at bindings 0, 1, …, in order. */
export function bindBuffers(
  device: GPUDevice,
  layout: GPUBindGroupLayout,
  buffers: (GPUBuffer | GPUBufferBinding)[],
  label?: string,
): GPUBindGroup {
  return device.createBindGroup({
    label,
    layout,
    entries: buffers.map((b, binding) => ({ binding, resource: b instanceof GPUBuffer ? { buffer: b } : b })),
  });
}

/**
 * The graph benches' raw floor: `reps` repetitions of a sequence of `length`
 * dispatches alternating two pipelines over one bind group, encoded into an
 * open pass, with `setPipeline` only when the pipeline changes. The bind group
 * is set at every dispatch, or, with `skipRepeatedBinds`, only when the
 * pipeline changed (the saving the runtime makes).
 *
 * @param pass The open pass.
 * @param options Pipelines (even, odd positions), bind group, repetitions,
 * sequence length, workgroups per dispatch, and whether repeated binds are skipped.
 */
export function encodeAlternating(
  pass: GPUComputePassEncoder,
  options: {
    pipelines: readonly [GPUComputePipeline, GPUComputePipeline];
    bindGroup: GPUBindGroup;
    reps: number;
    length: number;
    groups: number;
    skipRepeatedBinds: boolean;
  },
): void {
  const { pipelines: [even, odd], bindGroup, reps, length, groups, skipRepeatedBinds } = options;
  let last: GPUComputePipeline | null = null;
  let bound = false;
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < length; i++) {
      const p = i % 2 === 0 ? even : odd;
      if (p !== last) {
        pass.setPipeline(p);
        last = p;
        bound = false;
      }
      if (!bound) {
        pass.setBindGroup(0, bindGroup);
        bound = skipRepeatedBinds;
      }
      pass.dispatchWorkgroups(groups);
    }
  }
}

/**
 * Another build of the runtime, for A/B scripts: the `mod.ts` of a tree
 * prepared with `git archive <rev> mod.ts src | tar -x -C <root>`.
 *
 * @param root The tree's root, relative to the working directory or absolute.
 * @returns Its module.
 */
export async function importTree(root: string): Promise<typeof import("../mod.ts")> {
  return await import(new URL(`${root.replace(/\/$/, "")}/mod.ts`, `file://${Deno.cwd()}/`).href);
}

/**
 * The launch scripts' setup (`launch_loop.ts`, `ab_launch_js.ts`): a client
 * of `runtime` with room for a whole timed sample in one batch, the two
 * kernels `MIX_WGSL` and `COPY_WGSL`, two 64-element handles, and ten launches
 * alternating them, synced, so that both pipelines are compiled and valid and
 * no timed launch is held.
 *
 * @param runtime The runtime (this tree's `mod.ts`, or another tree's).
 * @returns The client, the kernels, the handles and the count `[1]`.
 */
export async function alternatingLaunches(runtime: typeof import("../mod.ts")) {
  const client = await runtime.createClient({ tasksMax: 4096 });
  const mix = runtime.defineKernel({ name: "mix", wgsl: MIX_WGSL });
  const copy = runtime.defineKernel({ name: "copy", wgsl: COPY_WGSL });
  const ab = [client.create(new Float32Array(64).fill(1)), client.create(new Float32Array(64).fill(2))];
  const one = [1];
  for (let i = 0; i < 10; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
  await client.sync();
  return { client, mix, copy, ab, one };
}

/**
 * Blocks until the device has run everything submitted and has finished the
 * work that follows completion, so that a timed encoding after it starts on a
 * quiet device.
 *
 * Deno polls the device inside `onSubmittedWorkDone()` itself. The promise
 * resolves about 10 ms later and nothing awaits it, so the caller's thread
 * never sleeps (an await would, and the encoding after such a sleep runs on
 * cold caches). When the poll returns, the device still has work of its own
 * to finish on another thread (68–110 µs on the 2-core VM with llvmpipe,
 * longer with more live GPU objects), and `createCommandEncoder` waits for
 * it. A raw loop that creates its encoder after the wait pays that outside its
 * timed region; encoding into a pass opened before the wait (as a stream
 * does, right after its submit) would instead overlap it and run 5–45%
 * slower. So every variant waits for it here, through one throwaway encoder.
 *
 * @param device The device.
 */
export function blockUntilIdle(device: GPUDevice): void {
  void device.queue.onSubmittedWorkDone();
  device.createCommandEncoder({ label: "bench settle encoder" }).finish({ label: "bench settle commands" });
}

/** The raw WebGPU upload and download of one buffer (`rawTransfer`). */
export interface RawTransfer {
  /** Writes `bytes` in 4 MiB `writeBuffer` chunks, a submit after each, then awaits `onSubmittedWorkDone`: ms. */
  write(bytes: Uint8Array<ArrayBuffer>): Promise<number>;
  /** Copies the buffer into a reused `MAP_READ` buffer, maps it, takes the range (`transfer()`, Deno's one copy), unmaps: ms and bytes. */
  read(): Promise<{ ms: number; bytes: Uint8Array }>;
  /** Destroys both buffers. */
  destroy(): void;
}

/**
 * The raw paths a runtime's `write` + `sync()` and `read` are measured
 * against: a storage buffer of `size` bytes and a staging buffer to read it
 * through, both labelled from `label`.
 *
 * @param device The device.
 * @param size Bytes.
 * @param label Label prefix of the two buffers.
 * @returns The two timed paths.
 */
export function rawTransfer(device: GPUDevice, size: number, label: string): RawTransfer {
  const chunk = 4 << 20;
  const buffer = device.createBuffer({
    label: `${label} ${size}`,
    size,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const staging = device.createBuffer({
    label: `${label} staging ${size}`,
    size,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  return {
    async write(bytes) {
      const t0 = performance.now();
      for (let at = 0; at < size; at += chunk) {
        device.queue.writeBuffer(buffer, at, bytes, at, Math.min(chunk, size - at));
        device.queue.submit([]);
      }
      await device.queue.onSubmittedWorkDone();
      return performance.now() - t0;
    },
    async read() {
      const t0 = performance.now();
      const encoder = device.createCommandEncoder({ label: `${label} read` });
      encoder.copyBufferToBuffer(buffer, 0, staging, 0, size);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ, 0, size);
      const bytes = new Uint8Array(staging.getMappedRange(0, size).transfer());
      staging.unmap();
      return { ms: performance.now() - t0, bytes };
    },
    destroy() {
      buffer.destroy();
      staging.destroy();
    },
  };
}

/**
 * Runs every variant once per rep, in an order shuffled afresh each rep from
 * a fixed seed, so that each variant follows every other about equally often
 * (a rotation keeps the same predecessor, which biased the breakdowns).
 *
 * @param names The variants' names.
 * @param reps Repetitions.
 * @param run Runs one variant (given its name and the rep, from 0).
 */
export function interleave(
  names: readonly string[],
  reps: number,
  run: (name: string, rep: number) => void,
): void {
  let seed = 0x2545f491;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const order = [...names];
  for (let rep = 0; rep < reps; rep++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const name of order) run(name, rep);
  }
}

/** The median of `xs` (the upper one of an even count). */
export function median(xs: readonly number[]): number {
  return [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
}

/** The mean of `xs`. */
export function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/**
 * The ratio of two builds measured round by round: per round, the median of
 * `a`'s block ÷ the median of `b`'s block (the two ran back to back in that
 * round), summarized over rounds. A drift of the host (clock, other load)
 * moves both blocks of a round alike, so this reads steadier than a ratio of
 * overall means or medians; the ratio of the minimums is the other steady
 * figure of host-cost timings.
 *
 * @param a Samples of the first build, per round.
 * @param b Samples of the second build, per round.
 * @returns The median, first and third quartile of the per-round ratios, and min(a) ÷ min(b).
 */
export function pairedRatio(
  a: readonly (readonly number[])[],
  b: readonly (readonly number[])[],
): { median: number; q1: number; q3: number; min: number } {
  const ratios = a.map((block, r) => median(block) / median(b[r]!)).sort((x, y) => x - y);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))]!;
  return {
    median: at(0.5),
    q1: at(0.25),
    q3: at(0.75),
    min: Math.min(...a.flat()) / Math.min(...b.flat()),
  };
}

/** Formats `pairedRatio`'s result as one line's tail. */
export function formatPaired(p: { median: number; q1: number; q3: number; min: number }): string {
  return `per round ${p.median.toFixed(3)} (quartiles ${p.q1.toFixed(3)}–${p.q3.toFixed(3)}), minimums ${
    p.min.toFixed(3)
  }`;
}

/** The two kernels the replay benches alternate: `a = a * 0.5 + b` and `b = a`. */
export const MIX_WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&a)) { a[g.x] = a[g.x] * 0.5 + b[g.x]; }
}`;
/** See `MIX_WGSL`. */
export const COPY_WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&a)) { b[g.x] = a[g.x]; }
}`;

/**
 * The raw floor of fast reads: primed MAP_READ staging buffers, each read
 * through an early map (`mapAsync()` not awaited: Deno has mapped it when the
 * call returns) and reused only once its leftover map has settled.
 */
export class EarlyMapRing {
  #ring: { buffer: GPUBuffer; leftover: Promise<unknown> | null }[];
  #next = 0;

  /** Use `EarlyMapRing.create`. */
  private constructor(ring: { buffer: GPUBuffer; leftover: Promise<unknown> | null }[]) {
    this.#ring = ring;
  }

  /**
   * Makes `n` staging buffers of `bytes` and primes each with one awaited map.
   *
   * @param device The device.
   * @param bytes Bytes of each buffer.
   * @param label Label prefix.
   * @param n Buffers. @default 512
   * @returns The ring.
   */
  static async create(device: GPUDevice, bytes: number, label: string, n = 512): Promise<EarlyMapRing> {
    const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
    const ring = Array.from({ length: n }, (_, i) => ({
      buffer: device.createBuffer({ label: `${label} ${i}`, size: bytes, usage }),
      leftover: null as Promise<unknown> | null,
    }));
    await Promise.all(ring.map((r) => r.buffer.mapAsync(GPUMapMode.READ)));
    for (const r of ring) r.buffer.unmap();
    return new EarlyMapRing(ring);
  }

  /**
   * Has `encode` copy into the next settled buffer (and submit), maps it
   * early and returns its first f32. Yields to the event loop whenever it has
   * gone round with every map still pending.
   *
   * @param encode Encodes and submits the work and the copy into the staging buffer.
   * @param bytes Bytes to map.
   * @returns The first f32 read.
   */
  async read(encode: (staging: GPUBuffer) => void, bytes: number): Promise<number> {
    const ring = this.#ring;
    let r = ring[this.#next]!;
    for (let tries = 0; r.leftover !== null; tries++) {
      this.#next = (this.#next + 1) % ring.length;
      r = ring[this.#next]!;
      if (tries > 0 && tries % ring.length === 0) await new Promise((ok) => setTimeout(ok, 1)); // let leftovers settle
    }
    this.#next = (this.#next + 1) % ring.length;
    encode(r.buffer);
    const done = () => r.leftover = null;
    r.leftover = r.buffer.mapAsync(GPUMapMode.READ, 0, bytes).then(done, done);
    const v = new Float32Array(r.buffer.getMappedRange(0, bytes))[0]!;
    r.buffer.unmap();
    return v;
  }
}
