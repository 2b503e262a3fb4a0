/**
 * Replays a corpus dispatch on raw WebGPU, exactly as the client declared
 * it: its shader, entry point and constants, an explicit bind group layout of
 * the captured binding types (uniform, storage, read-only storage), one
 * buffer per binding filled with its before-bytes, and the captured
 * workgroup count. The bytes every binding holds afterwards come back. The
 * capture uses it to prove each dispatch it records is exact: replayed, it
 * must leave the recorded after-bytes.
 *
 * @module
 */

import type { Corpus, CorpusDispatch } from "../tests/conformance/_corpus.ts";

const align4 = (n: number) => Math.max(4, Math.ceil(n / 4) * 4);

/** Runs one dispatch on `device`; resolves with each binding's bytes after it (in binding order). */
export async function replayRaw(device: GPUDevice, corpus: Corpus, d: CorpusDispatch): Promise<Uint8Array[]> {
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ label: d.id, code: corpus.index.shaders[d.shader]! });
  const groups = [...new Set(d.bindings.map((b) => b.group))].sort((a, b) => a - b);
  const maxGroup = groups.at(-1) ?? -1;
  const layouts: GPUBindGroupLayout[] = [];
  for (let g = 0; g <= maxGroup; g++) {
    layouts.push(device.createBindGroupLayout({
      label: `${d.id} group ${g}`,
      entries: d.bindings.filter((b) => b.group === g).map((b) => ({
        binding: b.binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: b.type },
      })),
    }));
  }
  const pipeline = device.createComputePipeline({
    label: d.id,
    layout: device.createPipelineLayout({ label: d.id, bindGroupLayouts: layouts }),
    compute: { module, entryPoint: d.entryPoint, constants: d.constants },
  });
  const buffers = d.bindings.map((b) => {
    const bytes = corpus.blob(b.before);
    const usage = (b.type === "uniform" ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) |
      GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const buf = device.createBuffer({
      label: `${d.id} ${b.name}`,
      size: align4(bytes.length),
      usage,
      mappedAtCreation: true,
    });
    new Uint8Array(buf.getMappedRange()).set(bytes);
    buf.unmap();
    return buf;
  });
  const bindGroups = layouts.map((layout, g) =>
    device.createBindGroup({
      label: `${d.id} group ${g}`,
      layout,
      entries: d.bindings.flatMap((b, i) =>
        b.group === g
          ? [{ binding: b.binding, resource: { buffer: buffers[i]!, size: corpus.blob(b.before).length } }]
          : []
      ),
    })
  );
  const sizes = d.bindings.map((b) => align4(corpus.blob(b.before).length));
  const total = sizes.reduce((a, b) => a + b, 0);
  const staging = device.createBuffer({
    label: `${d.id} staging`,
    size: Math.max(total, 4),
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const encoder = device.createCommandEncoder({ label: d.id });
  const pass = encoder.beginComputePass({ label: d.id });
  pass.setPipeline(pipeline);
  bindGroups.forEach((g, i) => pass.setBindGroup(i, g));
  pass.dispatchWorkgroups(...d.workgroups);
  pass.end();
  let at = 0;
  buffers.forEach((b, i) => {
    encoder.copyBufferToBuffer(b, 0, staging, at, sizes[i]!);
    at += sizes[i]!;
  });
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error !== null) throw new Error(`${d.id}: ${error.message}`);
  await staging.mapAsync(GPUMapMode.READ);
  const all = new Uint8Array(staging.getMappedRange()).slice();
  staging.unmap();
  staging.destroy();
  for (const b of buffers) b.destroy();
  at = 0;
  return d.bindings.map((b, i) => {
    const out = all.slice(at, at + corpus.blob(b.before).length);
    at += sizes[i]!;
    return out;
  });
}
