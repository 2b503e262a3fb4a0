/**
 * A capturing shim around Deno's WebGPU, for `capture_conformance.ts`:
 * installed once, it patches the prototypes of `GPUDevice`,
 * `GPUCommandEncoder` and `GPUQueue` so that every compute dispatch any
 * client encodes is recorded with its pipeline (WGSL, entry point,
 * constants, label), its bind groups and workgroup count, and the bytes of
 * every bound buffer range just before and just after it ran.
 *
 * How: `beginComputePass` hands the client a recording pass. At its `end()`
 * each recorded dispatch is encoded into the client's real command encoder as
 * copies of its bound ranges into a staging buffer, a one-dispatch compute
 * pass, and copies again; the queue runs them in that order, so the "before"
 * copies see exactly what the dispatch read and the "after" copies what it
 * left. Staging buffers are mapped after the client's `submit`. Every buffer
 * a client creates (other than map-read ones) gets `COPY_SRC` added so its
 * ranges can be copied, uniform buffers included; its `usage` still reads as
 * asked. Only the capture uses this:
 * the client's results are unchanged, since the dispatches and their order
 * are. One more patch serves the client, not the capture: `writeBuffer` from
 * a view of a `SharedArrayBuffer` (ORT's JavaScript EP writes from its
 * threaded WebAssembly memory), which Deno's WebGPU refuses, writes a copy.
 *
 * @module
 */

/** What a pipeline was made of. */
export interface PipelineInfo {
  readonly code: string;
  readonly entryPoint: string | undefined;
  readonly constants: Record<string, number>;
  readonly label: string;
  /** Per group, `binding → type`, when the layout was explicit; undefined for `"auto"`. */
  readonly layout: Map<number, string>[] | undefined;
}

/** One bound range, as encoded. */
export interface BoundRange {
  readonly group: number;
  readonly binding: number;
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
  /** The type in the bind group's layout, when explicit. */
  readonly layoutType: string | undefined;
}

/** One captured dispatch, with its bytes once its submit completed. */
export interface CapturedDispatch {
  /** The position among all dispatches submitted, in queue order. */
  seq: number;
  /** What `tag` said when it was encoded. */
  readonly tag: string;
  readonly pipeline: PipelineInfo;
  readonly ranges: readonly BoundRange[];
  workgroups: [number, number, number];
  readonly indirect: boolean;
  /** Why the capture cannot stand for this dispatch, if it cannot. */
  readonly problem: string | undefined;
  before: Uint8Array[];
  after: Uint8Array[];
}

interface Pending {
  readonly dispatch: CapturedDispatch;
  readonly staging: GPUBuffer;
  /** Offsets in staging of each range's before and after copy, and of an indirect count. */
  readonly at: { before: number[]; after: number[]; count: number };
}

interface GroupInfo {
  readonly layout: Map<number, string> | undefined;
  readonly entries: { binding: number; buffer: GPUBuffer; offset: number; size: number | undefined }[];
}

const align4 = (n: number) => Math.ceil(n / 4) * 4;

/** The capture: install once, tag the work, await `settled()`, read `dispatches`. */
export class WebGpuCapture {
  #modules = new WeakMap<GPUShaderModule, string>();
  #pipelines = new WeakMap<GPUComputePipeline, PipelineInfo>();
  #groupLayouts = new WeakMap<GPUBindGroupLayout, Map<number, string>>();
  #pipelineLayouts = new WeakMap<GPUPipelineLayout, Map<number, string>[]>();
  #groups = new WeakMap<GPUBindGroup, GroupInfo>();
  #encoderDevices = new WeakMap<GPUCommandEncoder, GPUDevice>();
  #encoded = new WeakMap<GPUCommandEncoder, Pending[]>();
  #finished = new WeakMap<GPUCommandBuffer, Pending[]>();
  #maps: Promise<void>[] = [];
  #seq = 0;
  /** Dispatches in queue order (those whose bytes are read once `settled()` resolves). */
  readonly dispatches: CapturedDispatch[] = [];
  /** The label new dispatches get. */
  tag = "";
  /** While false, dispatches pass through unrecorded. */
  recording = true;

  /** Patches the WebGPU prototypes. */
  install(): void {
    // deno-lint-ignore no-this-alias
    const cap = this;
    // deno-lint-ignore no-explicit-any
    const dev = GPUDevice.prototype as any;
    const createBuffer = dev.createBuffer;
    dev.createBuffer = function (d: GPUBufferDescriptor) {
      const usage = (d.usage & GPUBufferUsage.MAP_READ) ? d.usage : d.usage | GPUBufferUsage.COPY_SRC;
      const buffer = createBuffer.call(this, { ...d, usage });
      // The client sees the usage it asked for (tfjs keys its buffer pool by it).
      if (usage !== d.usage) Object.defineProperty(buffer, "usage", { value: d.usage });
      return buffer;
    };
    const createShaderModule = dev.createShaderModule;
    dev.createShaderModule = function (d: GPUShaderModuleDescriptor) {
      const m = createShaderModule.call(this, d);
      cap.#modules.set(m, d.code);
      return m;
    };
    const createBindGroupLayout = dev.createBindGroupLayout;
    dev.createBindGroupLayout = function (d: GPUBindGroupLayoutDescriptor) {
      const l = createBindGroupLayout.call(this, d);
      const types = new Map<number, string>();
      for (const e of d.entries) {
        if (e.buffer !== undefined) types.set(e.binding, e.buffer.type ?? "uniform");
        else types.set(e.binding, "non-buffer");
      }
      cap.#groupLayouts.set(l, types);
      return l;
    };
    const createPipelineLayout = dev.createPipelineLayout;
    dev.createPipelineLayout = function (d: GPUPipelineLayoutDescriptor) {
      const l = createPipelineLayout.call(this, d);
      cap.#pipelineLayouts.set(
        l,
        [...d.bindGroupLayouts].map((g) => (g ? cap.#groupLayouts.get(g) : undefined) ?? new Map()),
      );
      return l;
    };
    const info = (d: GPUComputePipelineDescriptor): PipelineInfo => ({
      code: cap.#modules.get(d.compute.module) ?? "",
      entryPoint: d.compute.entryPoint ?? undefined,
      constants: Object.fromEntries(Object.entries(d.compute.constants ?? {}).map(([k, v]) => [k, Number(v)])),
      label: d.label ?? d.compute.module.label ?? "",
      layout: d.layout === "auto" ? undefined : cap.#pipelineLayouts.get(d.layout),
    });
    const createComputePipeline = dev.createComputePipeline;
    dev.createComputePipeline = function (d: GPUComputePipelineDescriptor) {
      const p = createComputePipeline.call(this, d);
      cap.#pipelines.set(p, info(d));
      return p;
    };
    const createComputePipelineAsync = dev.createComputePipelineAsync;
    dev.createComputePipelineAsync = async function (d: GPUComputePipelineDescriptor) {
      const p = await createComputePipelineAsync.call(this, d);
      cap.#pipelines.set(p, info(d));
      return p;
    };
    const createCommandEncoder = dev.createCommandEncoder;
    dev.createCommandEncoder = function (this: GPUDevice, d?: GPUCommandEncoderDescriptor) {
      const e = createCommandEncoder.call(this, d);
      cap.#encoderDevices.set(e, this);
      return e;
    };
    const createBindGroup = dev.createBindGroup;
    dev.createBindGroup = function (d: GPUBindGroupDescriptor) {
      const g = createBindGroup.call(this, d);
      const entries: GroupInfo["entries"] = [];
      for (const e of d.entries) {
        const r = e.resource as GPUBufferBinding | GPUBuffer;
        if (r instanceof GPUBuffer) entries.push({ binding: e.binding, buffer: r, offset: 0, size: undefined });
        else if (r && "buffer" in r) {
          entries.push({ binding: e.binding, buffer: r.buffer, offset: r.offset ?? 0, size: r.size });
        }
      }
      cap.#groups.set(g, { layout: cap.#groupLayouts.get(d.layout), entries });
      return g;
    };

    // deno-lint-ignore no-explicit-any
    const enc = GPUCommandEncoder.prototype as any;
    const beginComputePass = enc.beginComputePass;
    enc.beginComputePass = function (this: GPUCommandEncoder, d?: GPUComputePassDescriptor) {
      if (!cap.recording) return beginComputePass.call(this, d);
      return cap.#recordingPass(this, beginComputePass);
    };
    const finish = enc.finish;
    enc.finish = function (this: GPUCommandEncoder, d?: GPUCommandBufferDescriptor) {
      const cb = finish.call(this, d);
      const pending = cap.#encoded.get(this);
      if (pending) cap.#finished.set(cb, pending);
      return cb;
    };
    // deno-lint-ignore no-explicit-any
    const queue = GPUQueue.prototype as any;
    // Deno's writeBuffer refuses views of a SharedArrayBuffer (JSEP's threaded WebAssembly memory): copy them.
    const writeBuffer = queue.writeBuffer;
    queue.writeBuffer = function (
      this: GPUQueue,
      buffer: GPUBuffer,
      offset: number,
      data: BufferSource | SharedArrayBuffer,
      dataOffset?: number,
      size?: number,
    ) {
      const shared = data instanceof SharedArrayBuffer ||
        (ArrayBuffer.isView(data) && data.buffer instanceof SharedArrayBuffer);
      if (!shared) return writeBuffer.call(this, buffer, offset, data, dataOffset, size);
      const view = ArrayBuffer.isView(data)
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : new Uint8Array(data);
      const unit = ArrayBuffer.isView(data) && !(data instanceof DataView)
        ? (data as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT
        : 1;
      const from = (dataOffset ?? 0) * unit;
      const n = size === undefined ? view.byteLength - from : size * unit;
      return writeBuffer.call(this, buffer, offset, view.slice(from, from + n));
    };
    const submit = queue.submit;
    queue.submit = function (this: GPUQueue, cbs: GPUCommandBuffer[]) {
      const list = [...cbs];
      const r = submit.call(this, list);
      for (const cb of list) {
        for (const p of cap.#finished.get(cb) ?? []) {
          p.dispatch.seq = cap.#seq++;
          cap.dispatches.push(p.dispatch);
          cap.#maps.push(cap.#read(p));
        }
      }
      return r;
    };
  }

  /** Resolves when every submitted dispatch's bytes are read. */
  async settled(): Promise<void> {
    while (this.#maps.length > 0) await Promise.all(this.#maps.splice(0));
  }

  /** A pass object that records; its `end()` encodes each dispatch between copies. */
  #recordingPass(encoder: GPUCommandEncoder, begin: (d?: GPUComputePassDescriptor) => GPUComputePassEncoder) {
    let pipeline: GPUComputePipeline | undefined;
    const groups: (GPUBindGroup | undefined)[] = [];
    const list: {
      pipeline: GPUComputePipeline;
      groups: (GPUBindGroup | undefined)[];
      count: number[] | GPUBuffer;
      at: number;
    }[] = [];
    const end = () => {
      for (const d of list) this.#encode(encoder, begin, d.pipeline, d.groups, d.count, d.at);
    };
    return {
      label: "",
      setPipeline(p: GPUComputePipeline) {
        pipeline = p;
      },
      setBindGroup(i: number, g: GPUBindGroup | null, offsets?: Iterable<number> | Uint32Array) {
        if (offsets !== undefined && [...(offsets as Iterable<number>)].length > 0) {
          // The corpus has no place for them: the client's run fails, and its case is left out, named.
          throw new Error("WebGpuCapture: setBindGroup with dynamic offsets is not supported");
        }
        groups[i] = g ?? undefined;
      },
      dispatchWorkgroups(x: number, y = 1, z = 1) {
        list.push({ pipeline: pipeline!, groups: [...groups], count: [x, y, z], at: 0 });
      },
      dispatchWorkgroupsIndirect(buffer: GPUBuffer, offset: number) {
        list.push({ pipeline: pipeline!, groups: [...groups], count: buffer, at: offset });
      },
      pushDebugGroup() {},
      popDebugGroup() {},
      insertDebugMarker() {},
      end,
    };
  }

  #encode(
    encoder: GPUCommandEncoder,
    begin: (d?: GPUComputePassDescriptor) => GPUComputePassEncoder,
    pipeline: GPUComputePipeline,
    groups: (GPUBindGroup | undefined)[],
    count: number[] | GPUBuffer,
    countOffset: number,
  ): void {
    const info = this.#pipelines.get(pipeline);
    const ranges: BoundRange[] = [];
    groups.forEach((g, group) => {
      if (g === undefined) return;
      const gi = this.#groups.get(g);
      if (gi === undefined) return;
      for (const e of gi.entries) {
        ranges.push({
          group,
          binding: e.binding,
          buffer: e.buffer,
          offset: e.offset,
          size: e.size ?? e.buffer.size - e.offset,
          layoutType: gi.layout?.get(e.binding),
        });
      }
    });
    ranges.sort((a, b) => a.group - b.group || a.binding - b.binding);
    const at = { before: [] as number[], after: [] as number[], count: -1 };
    let size = 0;
    for (const r of ranges) {
      at.before.push(size);
      size += align4(r.size);
    }
    for (const r of ranges) {
      at.after.push(size);
      size += align4(r.size);
    }
    if (!Array.isArray(count)) {
      at.count = size;
      size += 12;
    }
    const device = this.#encoderDevices.get(encoder);
    if (device === undefined) throw new Error("WebGpuCapture: a command encoder the capture did not see created");
    const staging = device.createBuffer({
      label: "capture staging",
      size: Math.max(size, 4),
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    let problem = info === undefined ? "its pipeline was created before the capture was installed" : undefined;
    for (const r of ranges) {
      if (r.offset + align4(r.size) > r.buffer.size) {
        problem ??= `a bound range of ${r.size} bytes ends unaligned at its buffer's end (copies move whole words)`;
      }
    }
    const copy = (which: number[]) =>
      ranges.forEach((r, i) => {
        const n = Math.min(align4(r.size), r.buffer.size - r.offset) & ~3;
        if (n > 0) encoder.copyBufferToBuffer(r.buffer, r.offset, staging, which[i]!, n);
      });
    copy(at.before);
    if (!Array.isArray(count)) encoder.copyBufferToBuffer(count, countOffset, staging, at.count, 12);
    const pass = begin.call(encoder);
    pass.setPipeline(pipeline);
    groups.forEach((g, i) => {
      if (g !== undefined) pass.setBindGroup(i, g);
    });
    if (Array.isArray(count)) pass.dispatchWorkgroups(count[0]!, count[1]!, count[2]!);
    else pass.dispatchWorkgroupsIndirect(count, countOffset);
    pass.end();
    copy(at.after);
    const dispatch: CapturedDispatch = {
      seq: -1,
      tag: this.tag,
      pipeline: info ?? { code: "", entryPoint: undefined, constants: {}, label: "", layout: undefined },
      ranges,
      workgroups: Array.isArray(count) ? [count[0]!, count[1]!, count[2]!] : [0, 0, 0],
      indirect: !Array.isArray(count),
      problem,
      before: [],
      after: [],
    };
    if (!this.#encoded.has(encoder)) this.#encoded.set(encoder, []);
    this.#encoded.get(encoder)!.push({ dispatch, staging, at });
  }

  async #read(p: Pending): Promise<void> {
    await p.staging.mapAsync(GPUMapMode.READ);
    const all = new Uint8Array(p.staging.getMappedRange()).slice();
    p.staging.unmap();
    p.staging.destroy();
    const d = p.dispatch;
    d.before = d.ranges.map((r, i) => all.slice(p.at.before[i]!, p.at.before[i]! + r.size));
    d.after = d.ranges.map((r, i) => all.slice(p.at.after[i]!, p.at.after[i]! + r.size));
    if (d.indirect) {
      const c = new Uint32Array(all.buffer, p.at.count, 3);
      d.workgroups = [c[0]!, c[1]!, c[2]!];
    }
  }
}
