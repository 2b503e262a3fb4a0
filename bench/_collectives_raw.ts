/**
 * What the collective benches share: the source data of device `i`, the raw
 * host sum, chunked uploads, and the raw devices' source, destination and
 * staging buffers.
 *
 * @module
 */

const U = GPUBufferUsage;

/** Device `i`'s `n` f32: `(k % 97) + 1000·i`. */
export function sourceData(n: number, i: number): Float32Array<ArrayBuffer> {
  const a = new Float32Array(n);
  for (let k = 0; k < n; k++) a[k] = (k % 97) + i * 1000;
  return a;
}

/** acc += x, element-wise (a function of its own, as a hand-written raw path would have). */
export function sumInto(acc: Float32Array, x: Float32Array): void {
  for (let k = 0; k < acc.length; k++) acc[k] = acc[k]! + x[k]!;
}

/** Uploads `x` into `b` with one `writeBuffer` and one empty submit per `chunk` bytes. */
export function chunked(d: GPUDevice, b: GPUBuffer, x: Float32Array<ArrayBuffer>, chunk: number): void {
  const step = chunk / 4;
  for (let at = 0; at < x.length; at += step) {
    d.queue.writeBuffer(b, at * 4, x, at, Math.min(step, x.length - at));
    d.queue.submit([]);
  }
}

/** Each raw device's source (holding `sourceData`), destination and read-back staging buffer. */
export function rawBuffers(
  raw: readonly GPUDevice[],
  n: number,
  chunk: number,
): { src: GPUBuffer[]; dst: GPUBuffer[]; staging: GPUBuffer[] } {
  const bytes = n * 4;
  const usage = U.STORAGE | U.COPY_SRC | U.COPY_DST;
  const src = raw.map((d, i) => {
    const b = d.createBuffer({ label: `raw src ${i}`, size: bytes, usage });
    chunked(d, b, sourceData(n, i), chunk);
    return b;
  });
  const dst = raw.map((d, i) => d.createBuffer({ label: `raw dst ${i}`, size: bytes, usage }));
  const staging = raw.map((d, i) =>
    d.createBuffer({ label: `raw staging ${i}`, size: bytes, usage: U.MAP_READ | U.COPY_DST })
  );
  return { src, dst, staging };
}
