/**
 * WGSL generators for an f32 matrix multiply C = A·B (row-major A: M×K,
 * B: K×N, C: M×N), the candidates of the autotune example and of
 * `bench/matmul_sweep.ts`. Plain strings, no runtime import, so a raw WebGPU
 * script can use them too.
 *
 * Binding convention (the runtime's): A, B, C at `@group(0) @binding(0..2)`
 * as `var<storage, read_write>`, then the info words `{ m, n, k }` at
 * binding 3 as `var<storage, read>`. Every kernel takes any M, N, K: loads
 * past the edges read zeros, stores past them are skipped. Kernels with
 * `vec: 4` read A and B and write C as `vec4<f32>`, which needs K and N to be
 * multiples of 4 (`supports` says so; the tunable set skips them otherwise).
 *
 * The register-blocked family (`kind: "blocked"`): a workgroup computes a
 * BM×BN block of C, stepping through K by BK; each invocation computes a
 * TM×TN sub-block held in `vec4` registers (named variables, so no array is
 * indexed at run time). The A tile is stored transposed in workgroup memory
 * (`As[k][m]`), so both operands are read as `vec4`s; an invocation's rows
 * (and columns) are split into groups of 4 spread across the block, so that
 * the invocations of a warp read consecutive `vec4`s without bank conflicts.
 * The inner products over the BK step are unrolled in the source (no loop for
 * the driver to unroll, and no loop-bounding counter from naga). Tiles are
 * `[buffer][k][m/4]` arrays: in the unrolled math only the innermost index is
 * dynamic, so the clamps WebGPU adds on dynamic indices are loop invariant
 * (computed once per step, not per load). With
 * `double`, two tile buffers alternate, so the next tile's global loads
 * overlap the current tile's math and one barrier per step suffices.
 *
 * @module
 */

/** A matmul kernel's parameters. */
export type MatmulConfig =
  | { readonly kind: "naive"; readonly name: string; readonly vec: 1 }
  | { readonly kind: "tiled"; readonly name: string; readonly vec: 1; readonly tile: number }
  | {
    readonly kind: "blocked";
    readonly name: string;
    /** Rows and columns of C per workgroup. */
    readonly bm: number;
    readonly bn: number;
    /** K step. */
    readonly bk: number;
    /** Rows and columns of C per invocation (multiples of 4). */
    readonly tm: number;
    readonly tn: number;
    /** Width of global loads and stores: 4 needs K % 4 == 0 and N % 4 == 0. */
    readonly vec: 1 | 4;
    /** Two alternating tile buffers, one barrier per K step. */
    readonly double: boolean;
    /** Unroll the BK inner products in the source. @default true */
    readonly unroll?: boolean;
  };

/** The size of a product: A is m×k, B is k×n. */
export interface MatmulShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

const HEADER = (vec: 1 | 4) => {
  const t = vec === 4 ? "vec4<f32>" : "f32";
  return `struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read_write> a: array<${t}>;
@group(0) @binding(1) var<storage, read_write> b: array<${t}>;
@group(0) @binding(2) var<storage, read_write> c: array<${t}>;
@group(0) @binding(3) var<storage, read> dims: Dims;
`;
};

function naive(): string {
  return `${HEADER(1)}
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let row = g.y;
  let col = g.x;
  if (row >= dims.m || col >= dims.n) { return; }
  var acc = 0.0;
  for (var p = 0u; p < dims.k; p++) { acc = fma(a[row * dims.k + p], b[p * dims.n + col], acc); }
  c[row * dims.n + col] = acc;
}`;
}

function tiled(t: number): string {
  return `${HEADER(1)}
const T = ${t}u;
var<workgroup> ta: array<array<f32, T>, T>;
var<workgroup> tb: array<array<f32, T>, T>;
@compute @workgroup_size(T, T)
fn main(@builtin(local_invocation_id) l: vec3u, @builtin(workgroup_id) w: vec3u) {
  let row = w.y * T + l.y;
  let col = w.x * T + l.x;
  var acc = 0.0;
  for (var t = 0u; t < dims.k; t += T) {
    var av = 0.0;
    var bv = 0.0;
    if (row < dims.m && t + l.x < dims.k) { av = a[row * dims.k + t + l.x]; }
    if (col < dims.n && t + l.y < dims.k) { bv = b[(t + l.y) * dims.n + col]; }
    ta[l.y][l.x] = av;
    tb[l.y][l.x] = bv;
    workgroupBarrier();
    for (var i = 0u; i < T; i++) { acc = fma(ta[l.y][i], tb[i][l.x], acc); }
    workgroupBarrier();
  }
  if (row < dims.m && col < dims.n) { c[row * dims.n + col] = acc; }
}`;
}

function blocked(cfg: Extract<MatmulConfig, { kind: "blocked" }>): string {
  const { bm, bn, bk, tm, tn, vec } = cfg;
  const tx = bn / tn; // invocations along N
  const ty = bm / tm; // invocations along M
  const threads = tx * ty;
  const rm = tm / 4; // row groups of 4 per invocation
  const cn = tn / 4; // column groups of 4 per invocation
  const sm4 = bm / rm / 4; // vec4 stride between an invocation's row groups
  const sn4 = bn / cn / 4;
  const tileA = (bk * bm) / 4; // vec4s per A tile
  const tileB = (bk * bn) / 4;
  const bufs = cfg.double ? 2 : 1;
  const lines: string[] = [HEADER(vec)];
  lines.push(`const BM = ${bm}u;
const BN = ${bn}u;
const BK = ${bk}u;
var<workgroup> As: array<array<array<vec4<f32>, ${bm / 4}>, BK>, ${bufs}>;
var<workgroup> Bs: array<array<array<vec4<f32>, ${bn / 4}>, BK>, ${bufs}>;
`);

  // Global → registers: the loads of one K step, as (register, statement) pairs.
  const loadA: string[] = [];
  const storeA: string[] = [];
  const loadB: string[] = [];
  const storeB: string[] = [];
  const per = (count: number) => Math.ceil(count / threads);
  const guard = (v: string, count: number) => count % threads === 0 ? "" : `if (${v} < ${count}u) `;
  const within = (v: string, count: number) => count % threads === 0 ? "" : `${v} < ${count}u && `;
  if (vec === 4) {
    for (let l = 0; l < per(tileA); l++) {
      const v = `(li + ${l * threads}u)`;
      loadA.push(`let ra${l}r = m0 + ${v} / ${bk / 4}u; let ra${l}k = k0 + (${v} % ${bk / 4}u) * 4u;
    ra${l} = vec4<f32>(0.0);
    if (${within(v, tileA)}ra${l}r < dims.m && ra${l}k < dims.k) { ra${l} = a[(ra${l}r * dims.k + ra${l}k) / 4u]; }`);
      storeA.push(`${guard(v, tileA)}{
      let r = ${v} / ${bk / 4}u; let kq = (${v} % ${bk / 4}u) * 4u;
      As[buf][kq][r / 4u][r % 4u] = ra${l}.x;
      As[buf][kq + 1u][r / 4u][r % 4u] = ra${l}.y;
      As[buf][kq + 2u][r / 4u][r % 4u] = ra${l}.z;
      As[buf][kq + 3u][r / 4u][r % 4u] = ra${l}.w;
    }`);
    }
    for (let l = 0; l < per(tileB); l++) {
      const v = `(li + ${l * threads}u)`;
      loadB.push(`let rb${l}k = k0 + ${v} / ${bn / 4}u; let rb${l}c = n0 + (${v} % ${bn / 4}u) * 4u;
    rb${l} = vec4<f32>(0.0);
    if (${within(v, tileB)}rb${l}k < dims.k && rb${l}c < dims.n) { rb${l} = b[(rb${l}k * dims.n + rb${l}c) / 4u]; }`);
      storeB.push(`${guard(v, tileB)}{ Bs[buf][${v} / ${bn / 4}u][${v} % ${bn / 4}u] = rb${l}; }`);
    }
  } else {
    for (let l = 0; l < per(bm * bk); l++) {
      const e = `(li + ${l * threads}u)`;
      loadA.push(`let ra${l}r = m0 + ${e} / BK; let ra${l}k = k0 + ${e} % BK;
    ra${l} = 0.0;
    if (${within(e, bm * bk)}ra${l}r < dims.m && ra${l}k < dims.k) { ra${l} = a[ra${l}r * dims.k + ra${l}k]; }`);
      storeA.push(
        `${guard(e, bm * bk)}{ let r = ${e} / BK; As[buf][${e} % BK][r / 4u][r % 4u] = ra${l}; }`,
      );
    }
    for (let l = 0; l < per(bn * bk); l++) {
      const e = `(li + ${l * threads}u)`;
      loadB.push(`let rb${l}k = k0 + ${e} / BN; let rb${l}c = n0 + ${e} % BN;
    rb${l} = 0.0;
    if (${within(e, bn * bk)}rb${l}k < dims.k && rb${l}c < dims.n) { rb${l} = b[rb${l}k * dims.n + rb${l}c]; }`);
      storeB.push(
        `${guard(e, bn * bk)}{ let cc = ${e} % BN; Bs[buf][${e} / BN][cc / 4u][cc % 4u] = rb${l}; }`,
      );
    }
  }
  const regType = vec === 4 ? "vec4<f32>" : "f32";
  const regs = [
    ...loadA.map((_, l) => `  var ra${l}: ${regType};`),
    ...loadB.map((_, l) => `  var rb${l}: ${regType};`),
  ];
  const acc: string[] = [];
  for (let p = 0; p < rm; p++) {
    for (let i = 0; i < 4; i++) for (let q = 0; q < cn; q++) acc.push(`c${p}${i}${q}`);
  }

  // The math of one k within the step.
  const step = (kk: string) => {
    const out: string[] = [];
    for (let p = 0; p < rm; p++) out.push(`let a${p} = As[buf][${kk}][${p * sm4}u + ty];`);
    for (let q = 0; q < cn; q++) out.push(`let b${q} = Bs[buf][${kk}][${q * sn4}u + tx];`);
    for (let p = 0; p < rm; p++) {
      for (let i = 0; i < 4; i++) {
        const comp = "xyzw"[i];
        for (let q = 0; q < cn; q++) out.push(`c${p}${i}${q} = fma(vec4<f32>(a${p}.${comp}), b${q}, c${p}${i}${q});`);
      }
    }
    return out;
  };
  const compute = cfg.unroll === false
    ? [`for (var kk = 0u; kk < BK; kk++) {`, ...step("kk").map((s) => `  ${s}`), `}`]
    : Array.from({ length: bk }, (_, kk) => [`{`, ...step(`${kk}u`).map((s) => `  ${s}`), `}`]).flat();

  const ind = (xs: string[], n: number) => xs.map((s) => " ".repeat(n) + s).join("\n");
  lines.push(`@compute @workgroup_size(${threads})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3u) {
  let tx = li % ${tx}u;
  let ty = li / ${tx}u;
  let m0 = w.y * BM;
  let n0 = w.x * BN;
${regs.join("\n")}
${acc.map((v) => `  var ${v} = vec4<f32>(0.0);`).join("\n")}
  let steps = (dims.k + BK - 1u) / BK;`);
  if (cfg.double) {
    lines.push(`  {
    let k0 = 0u;
    let buf = 0u;
${ind(loadA, 4)}
${ind(loadB, 4)}
${ind(storeA, 4)}
${ind(storeB, 4)}
  }
  workgroupBarrier();
  for (var s = 0u; s < steps; s++) {
    let k0 = (s + 1u) * BK;
    let more = s + 1u < steps;
    if (more) {
${ind(loadA, 6)}
${ind(loadB, 6)}
    }
    {
      let buf = s % 2u;
${ind(compute, 6)}
    }
    if (more) {
      let buf = (s + 1u) % 2u;
${ind(storeA, 6)}
${ind(storeB, 6)}
    }
    workgroupBarrier();
  }`);
  } else {
    lines.push(`  let buf = 0u;
  for (var s = 0u; s < steps; s++) {
    let k0 = s * BK;
${ind(loadA, 4)}
${ind(loadB, 4)}
${ind(storeA, 4)}
${ind(storeB, 4)}
    workgroupBarrier();
${ind(compute, 4)}
    workgroupBarrier();
  }`);
  }
  // Stores: row (p, i), column group q.
  const stores: string[] = [];
  for (let p = 0; p < rm; p++) {
    for (let i = 0; i < 4; i++) {
      stores.push(`{ let row = m0 + ${p * sm4 * 4}u + ty * 4u + ${i}u;`);
      stores.push(`  if (row < dims.m) {`);
      for (let q = 0; q < cn; q++) {
        const col = `n0 + ${q * sn4 * 4}u + tx * 4u`;
        if (vec === 4) {
          stores.push(`    if (${col} < dims.n) { c[(row * dims.n + ${col}) / 4u] = c${p}${i}${q}; }`);
        } else {
          for (let j = 0; j < 4; j++) {
            stores.push(
              `    if (${col} + ${j}u < dims.n) { c[row * dims.n + ${col} + ${j}u] = c${p}${i}${q}.${"xyzw"[j]}; }`,
            );
          }
        }
      }
      stores.push(`  }`, `}`);
    }
  }
  lines.push(ind(stores, 2), "}");
  // Read the sizes once (the buffers are read_write, so a compiler may not hoist loads of them past stores).
  const [head, ...body] = lines;
  return [head, ...body.map((l) => l.replaceAll("dims.", "dims_"))].join("\n").replace(
    "let tx = li %",
    "let dims_m = dims.m;\n  let dims_n = dims.n;\n  let dims_k = dims.k;\n  let tx = li %",
  );
}

/**
 * The WGSL of a kernel.
 *
 * @param cfg Its parameters.
 * @returns The source (entry point `main`).
 * @throws {RangeError} When the block parameters do not divide (tm, tn multiples of 4, bm % tm, bn % tn, bk % 4).
 */
export function matmulWgsl(cfg: MatmulConfig): string {
  if (cfg.kind === "naive") return naive();
  if (cfg.kind === "tiled") return tiled(cfg.tile);
  const { bm, bn, bk, tm, tn } = cfg;
  if (tm % 4 || tn % 4 || bm % tm || bn % tn || bk % 4 || (bm / (tm / 4)) % 4 || (bn / (tn / 4)) % 4) {
    throw new RangeError(
      `matmul "${cfg.name}": block ${bm}×${bn}×${bk} with ${tm}×${tn} per invocation does not divide`,
    );
  }
  return blocked(cfg);
}

/**
 * Workgroups to launch for a shape.
 *
 * @param cfg The kernel.
 * @param shape The product's size.
 * @returns `[x, y, 1]`.
 */
export function matmulGrid(cfg: MatmulConfig, shape: MatmulShape): [number, number, number] {
  const [bm, bn] = cfg.kind === "naive" ? [16, 16] : cfg.kind === "tiled" ? [cfg.tile, cfg.tile] : [cfg.bm, cfg.bn];
  return [Math.ceil(shape.n / bn), Math.ceil(shape.m / bm), 1];
}

/**
 * Whether a kernel handles a shape (vec4 kernels need K and N multiples of 4).
 *
 * @param cfg The kernel.
 * @param shape The shape.
 * @returns True when it does.
 */
export function matmulSupports(cfg: MatmulConfig, shape: MatmulShape): boolean {
  return cfg.vec === 1 || (shape.k % 4 === 0 && shape.n % 4 === 0);
}

/**
 * Invocations per workgroup and bytes of workgroup memory of a kernel.
 *
 * @param cfg The kernel.
 * @returns Its footprint.
 */
export function matmulFootprint(cfg: MatmulConfig): { invocations: number; sharedBytes: number } {
  if (cfg.kind === "naive") return { invocations: 256, sharedBytes: 0 };
  if (cfg.kind === "tiled") return { invocations: cfg.tile * cfg.tile, sharedBytes: 8 * cfg.tile * cfg.tile };
  const bufs = cfg.double ? 2 : 1;
  return { invocations: (cfg.bm / cfg.tm) * (cfg.bn / cfg.tn), sharedBytes: 4 * bufs * cfg.bk * (cfg.bm + cfg.bn) };
}

/** Loop iterations one invocation runs (llvmpipe stops every invocation past 65535). */
export function matmulLoopIterations(cfg: MatmulConfig, shape: MatmulShape): number {
  if (cfg.kind === "naive") return shape.k;
  if (cfg.kind === "tiled") return Math.ceil(shape.k / cfg.tile) * (1 + cfg.tile);
  const steps = Math.ceil(shape.k / cfg.bk);
  return cfg.unroll === false ? steps * (1 + cfg.bk) : steps;
}

const B = (
  bm: number,
  bn: number,
  bk: number,
  tm: number,
  tn: number,
  vec: 1 | 4,
  double: boolean,
  unroll = true,
): MatmulConfig => ({
  kind: "blocked",
  name: `b${bm}x${bn}k${bk}_t${tm}x${tn}_v${vec}${double ? "_db" : ""}${unroll ? "" : "_loop"}`,
  bm,
  bn,
  bk,
  tm,
  tn,
  vec,
  double,
  unroll,
});

/** The candidates of the autotune example, in their fixed order (ties go to the earlier). */
export const MATMUL_CANDIDATES: readonly MatmulConfig[] = Object.freeze([
  B(128, 128, 16, 8, 8, 4, false),
  B(128, 64, 16, 8, 4, 4, true),
  B(128, 128, 8, 8, 8, 4, true),
  B(128, 128, 16, 8, 8, 4, true),
  B(128, 128, 8, 8, 8, 4, false),
  B(128, 64, 8, 8, 4, 4, true),
  B(64, 128, 8, 4, 8, 4, true),
  B(64, 64, 8, 4, 4, 4, true),
  B(64, 64, 16, 4, 4, 4, false),
  B(64, 64, 8, 4, 4, 1, false),
  { kind: "tiled", name: "tiled16", vec: 1, tile: 16 },
  { kind: "naive", name: "naive", vec: 1 },
]);

/** Extra kernels the sweep measures beside the candidates (to learn what the H200 likes). */
export const MATMUL_SWEEP_EXTRA: readonly MatmulConfig[] = Object.freeze([
  B(128, 128, 8, 8, 8, 4, true, false),
  B(128, 128, 8, 8, 8, 1, true),
  B(64, 64, 16, 8, 8, 4, true),
  B(128, 128, 32, 8, 8, 4, false),
  B(64, 32, 8, 4, 4, 4, true),
]);
