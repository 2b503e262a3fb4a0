/**
 * The count copy's windows: every count (12 bytes at a multiple of 4) of any
 * buffer lies inside the window bound at its offset, which is a multiple of
 * `minStorageBufferOffsetAlignment` and ends inside the buffer, and its word
 * index within the window stays below `alignment / 2 + 1` (the most copy
 * pipelines a device makes). Checked on a fake device: no GPU is needed.
 */

import assert from "node:assert/strict";
import { CountCopier, type CountCopyScratch, countWindow } from "../../src/kernel/count_copy.ts";

/** A device that makes labelled stand-ins and records the word of each copy pipeline. */
function fakeDevice(words: number[]): GPUDevice {
  const object = (d: { label?: string }) => ({ label: d.label ?? "" });
  return {
    createBindGroupLayout: object,
    createPipelineLayout: object,
    createShaderModule: object,
    createBindGroup: object,
    createComputePipeline: (d: GPUComputePipelineDescriptor) => {
      words.push(Number(d.compute.constants!.word));
      return object(d);
    },
  } as unknown as GPUDevice;
}

for (const alignment of [32, 64, 256]) {
  Deno.test(`every count of buffers from 32 to 1,200 bytes lies in its window (alignment ${alignment})`, () => {
    const words: number[] = [];
    const copier = new CountCopier(fakeDevice(words), alignment);
    const copy: CountCopyScratch = { pipeline: null!, bindGroup: null!, offsets: new Uint32Array(2) };
    for (let bytes = 32; bytes <= 1200; bytes += 4) {
      const window = countWindow(bytes, alignment);
      const src = { size: bytes, label: `src ${bytes}` } as GPUBuffer;
      const source = copier.bind(src, { label: "dst" } as GPUBuffer, "test");
      assert.equal(source.top, bytes - window);
      for (let offset = 0; offset + 12 <= bytes; offset += 4) {
        copier.place(copy, source, offset);
        const at = copy.offsets[0]!;
        const word = (offset - at) / 4;
        const where = `${bytes} B buffer, count at ${offset}: window at ${at}`;
        assert.equal(at % alignment, 0, where);
        assert.ok(at <= offset && offset + 12 <= at + window, where);
        assert.ok(at + window <= bytes, where);
        assert.ok(word <= alignment / 2, `${where}, word ${word}`);
        assert.equal(copy.pipeline.label, `denogpu count copy (word ${word})`, where);
      }
    }
    assert.deepEqual([...words].sort((a, b) => a - b), words.map((_, i) => i), "one pipeline per word, made once");
    assert.equal(copier.pipelinesCreated, alignment / 2 + 1);
  });
}

Deno.test("a source's bind group is made once per stream slot and forgotten when its buffer is destroyed", () => {
  const copier = new CountCopier(fakeDevice([]), 32);
  const src = { size: 4096, label: "page" } as GPUBuffer;
  const dst0 = { label: "stream 0 indirect count" } as GPUBuffer;
  const dst1 = { label: "stream 1 indirect count" } as GPUBuffer;
  const a = copier.source(7, src, dst0, 0);
  assert.equal(copier.source(7, src, dst0, 0), a);
  assert.notEqual(copier.source(7, src, dst1, 1), a);
  assert.equal(copier.cachedSources, 1);
  copier.evict(7);
  assert.equal(copier.cachedSources, 0);
  assert.notEqual(copier.source(7, src, dst0, 0), a);
});
