/**
 * Copying an indirect count inside the open compute pass. WebGPU forbids one
 * buffer to be both the INDIRECT source and a writable STORAGE binding of the
 * same dispatch, so a count stored in a page the launch also binds is copied
 * first into a small buffer of its own. A `copyBufferToBuffer` would end the
 * compute pass (copies are encoder commands); this copy is a dispatch of its
 * own instead, one invocation of a runtime kernel that reads the three words
 * from the count's page (bound read-only) and writes them into the
 * destination (bound as storage, usage STORAGE | INDIRECT). Each dispatch of
 * a compute pass is its own usage scope, so the copy and the launch that
 * follows it share the pass.
 *
 * The count's page is bound through a window with a dynamic offset, so one
 * bind group per source buffer serves every count in it: the window starts at
 * the count's offset rounded down to `minStorageBufferOffsetAlignment` (or
 * lower near the buffer's end, where a window must still fit), and the
 * count's word index within the window is a pipeline-overridable constant:
 * one pipeline per index, created at its first use (at most
 * `alignment / 2 + 1` of them; a count at the start of a handle uses index 0).
 * The destination is bound with a dynamic offset too: a stream copies each
 * count into one of several slots of its indirect count buffer (`CountSlots`).
 *
 * @module
 */

/** The copy kernel: three words from `window[word]` to `count`. */
export const COUNT_COPY_WGSL: string = `
override word: u32 = 0u;
@group(0) @binding(0) var<storage, read> window: array<u32>;
@group(0) @binding(1) var<storage, read_write> count: array<u32, 3>;
@compute @workgroup_size(1) fn main() {
  count[0] = window[word];
  count[1] = window[word + 1u];
  count[2] = window[word + 2u];
}`;

/** One count copy, ready to encode: its pipeline, bind group and the window's offset. */
export interface CountCopy {
  /** The copy pipeline of the count's word index within the window. */
  readonly pipeline: GPUComputePipeline;
  /** Window of the count's buffer and the destination (each with a dynamic offset). */
  readonly bindGroup: GPUBindGroup;
  /** Two dynamic offsets: the window's byte offset in the count's buffer, and the destination's. */
  readonly offsets: Uint32Array;
}

/** A buffer's copy bind group, with the window it binds. */
export interface CopySource {
  /** Binds a window of the buffer (dynamic offset) and the destination. */
  readonly bindGroup: GPUBindGroup;
  /** The highest window offset: the buffer's size less the window's. */
  readonly top: number;
}

/** A count copy being filled on the launch path (`CountCopier.place`). */
export interface CountCopyScratch {
  /** Set by `place`. */
  pipeline: GPUComputePipeline;
  /** Set by the caller. */
  bindGroup: GPUBindGroup;
  /** `[0]` is set by `place`, `[1]` (the destination's offset) by the caller. */
  readonly offsets: Uint32Array;
}

/**
 * Bytes between the slots a count copy writes to (its destination's dynamic
 * offsets): `minStorageBufferOffsetAlignment`, and at least the 16 bytes a
 * slot takes.
 *
 * @param alignment `minStorageBufferOffsetAlignment`.
 * @returns The stride.
 */
export function countSlotStride(alignment: number): number {
  return Math.max(alignment, 16);
}

/**
 * Encodes a count copy into `pass`: it leaves the copy pipeline and bind
 * group set, so the launch that follows sets its own again.
 *
 * @param pass The open pass.
 * @param copy The copy.
 */
export function encodeCountCopy(pass: GPUComputePassEncoder, copy: CountCopy): void {
  pass.setPipeline(copy.pipeline);
  pass.setBindGroup(0, copy.bindGroup, copy.offsets, 0, 2);
  pass.dispatchWorkgroups(1);
}

/**
 * The bytes of the window bound over a buffer of `bytes` bytes, for offsets
 * aligned to `alignment`: the whole buffer when it is smaller than
 * `alignment + 16`, else between `alignment + 16` and `2 * alignment + 16`,
 * chosen so that the buffer's size less the window is a multiple of
 * `alignment` (the last window ends at the buffer's end). Any count (12 bytes
 * at a multiple of 4) then lies in the window at its offset rounded down, or
 * in the last one.
 *
 * @param bytes The buffer's size (a multiple of 4).
 * @param alignment `minStorageBufferOffsetAlignment`.
 * @returns The window's bytes.
 */
export function countWindow(bytes: number, alignment: number): number {
  const min = alignment + 16;
  return bytes < min ? bytes : min + ((bytes - min) % alignment);
}

/**
 * Count copies of one device: the pipelines (one per word index), their
 * layout, and bind groups per source buffer and stream slot, forgotten when
 * the buffer is destroyed (`evict`). Nothing is created before the first copy.
 */
export class CountCopier {
  /** `minStorageBufferOffsetAlignment`: window offsets are multiples of it. */
  readonly alignment: number;
  #device: GPUDevice;
  #layout: GPUBindGroupLayout | null = null;
  #pipelineLayout: GPUPipelineLayout | null = null;
  #module: GPUShaderModule | null = null;
  #pipelines: GPUComputePipeline[] = [];
  #created = 0;
  #sources = new Map<number, (CopySource | undefined)[]>();

  /**
   * Creates the instance (no GPU object yet).
   *
   * @param device The device.
   * @param alignment `minStorageBufferOffsetAlignment`.
   */
  constructor(device: GPUDevice, alignment: number) {
    this.#device = device;
    this.alignment = alignment;
  }

  /** Copy pipelines created so far. */
  get pipelinesCreated(): number {
    return this.#created;
  }

  /** The bind group layout of the copy: a read-only window and the destination, each with a dynamic offset. */
  get layout(): GPUBindGroupLayout {
    if (this.#layout === null) {
      this.#layout = this.#device.createBindGroupLayout({
        label: "denogpu count copy layout",
        entries: [
          {
            binding: 0,
            visibility: GPUShaderStage.COMPUTE,
            buffer: { type: "read-only-storage", hasDynamicOffset: true },
          },
          {
            binding: 1,
            visibility: GPUShaderStage.COMPUTE,
            buffer: { type: "storage", hasDynamicOffset: true },
          },
        ],
      });
    }
    return this.#layout;
  }

  /**
   * The copy pipeline of word index `word` within the window (created at its first use).
   *
   * @param word The count's first word within the window.
   * @returns The pipeline.
   */
  pipeline(word: number): GPUComputePipeline {
    return this.#pipelines[word] ?? this.#createPipeline(word);
  }

  #createPipeline(word: number): GPUComputePipeline {
    const device = this.#device;
    this.#pipelineLayout ??= device.createPipelineLayout({
      label: "denogpu count copy pipeline layout",
      bindGroupLayouts: [this.layout],
    });
    this.#module ??= device.createShaderModule({ label: "denogpu count copy", code: COUNT_COPY_WGSL });
    const pipeline = device.createComputePipeline({
      label: `denogpu count copy (word ${word})`,
      layout: this.#pipelineLayout,
      compute: { module: this.#module, entryPoint: "main", constants: { word } },
    });
    this.#pipelines[word] = pipeline;
    this.#created++;
    return pipeline;
  }

  /**
   * A new bind group copying from `src` into 12 bytes of `dst`, at the
   * destination's dynamic offset (graphs keep theirs and copy to offset 0;
   * streams use `source` and copy to one of their count slots).
   *
   * @param src The buffer holding counts.
   * @param dst The destination (usage STORAGE | INDIRECT, at least 12 bytes; every offset the copy names leaves 12).
   * @param label The bind group's label.
   * @returns The bind group and its window.
   */
  bind(src: GPUBuffer, dst: GPUBuffer, label: string): CopySource {
    const window = countWindow(src.size, this.alignment);
    const bindGroup = this.#device.createBindGroup({
      label,
      layout: this.layout,
      entries: [
        { binding: 0, resource: { buffer: src, offset: 0, size: window } },
        { binding: 1, resource: { buffer: dst, offset: 0, size: 12 } },
      ],
    });
    return { bindGroup, top: src.size - window };
  }

  /**
   * The cached bind group copying from storage `id` into stream `slot`'s
   * destination, created on the first copy from that buffer.
   *
   * @param id The storage id of the count's buffer.
   * @param src Its buffer.
   * @param dst The stream's destination buffer.
   * @param slot The stream's slot.
   * @returns The bind group and its window.
   */
  source(id: number, src: GPUBuffer, dst: GPUBuffer, slot: number): CopySource {
    let bySlot = this.#sources.get(id);
    if (bySlot === undefined) this.#sources.set(id, bySlot = []);
    return bySlot[slot] ??= this.bind(src, dst, `count copy: buffer ${id} to ${dst.label}`);
  }

  /**
   * Points `copy` at the count at byte `offset` of a source: sets the
   * window's offset and the pipeline of the count's word within it.
   *
   * @param copy The copy being filled (its bind group is the source's).
   * @param source The source's bind group and window.
   * @param offset The count's byte offset in its buffer (a multiple of 4).
   */
  place(copy: CountCopyScratch, source: CopySource, offset: number): void {
    let at = offset - offset % this.alignment;
    if (at > source.top) at = source.top;
    copy.offsets[0] = at;
    copy.pipeline = this.pipeline((offset - at) >>> 2);
  }

  /**
   * Forgets the bind groups of a destroyed buffer.
   *
   * @param id Its storage id.
   */
  evict(id: number): void {
    this.#sources.delete(id);
  }

  /** Source buffers with cached bind groups (for tests). */
  get cachedSources(): number {
    return this.#sources.size;
  }
}
