/**
 * The raw WebGPU side of the benches: bind group layouts, pipelines and bind
 * groups made directly on the device, without the runtime, for the baselines
 * the runtime is measured against. Only setup lives here; every timed loop
 * stays in its bench file.
 */

/**
 * A bind group layout of `buffers` read-write storage buffers at bindings 0,
 * 1, …, plus, with `dynamicInfo`, a read-only storage buffer with a dynamic
 * offset after them (info words in an arena).
 */
export function storageLayout(
  device: GPUDevice,
  buffers: number,
  options: { dynamicInfo?: boolean; label?: string } = {},
): GPUBindGroupLayout {
  const entries: GPUBindGroupLayoutEntry[] = [];
  for (let i = 0; i < buffers; i++) {
    entries.push({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } });
  }
  if (options.dynamicInfo) {
    entries.push({
      binding: buffers,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: "read-only-storage", hasDynamicOffset: true },
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

/** A bind group of whole buffers at bindings 0, 1, …, in order. */
export function bindBuffers(device: GPUDevice, layout: GPUBindGroupLayout, buffers: GPUBuffer[]): GPUBindGroup {
  return device.createBindGroup({
    layout,
    entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
}
