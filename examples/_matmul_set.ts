/**
 * The f32 matmul as a tunable set over a client: one candidate per kernel of
 * `_matmul_kernels.ts`, keyed by the anchored shape and whether K and N allow
 * `vec4` access. Shared by the example, the bench and the tests.
 *
 * Plan: the register-blocked kernels form one group; the naive and tiled
 * ones a second that, for products of 256³ and more, is only tried when
 * every blocked kernel failed (they are far slower there, and measuring them
 * would cost most of the tuning time). `vec4` kernels are skipped (priority
 * −1) for shapes whose K or N is not a multiple of 4, and kernels beyond the
 * device's workgroup limits are skipped too.
 *
 * @module
 */

import type { ComputeClient, Handle, Kernel } from "../mod.ts";
import { defineKernel } from "../mod.ts";
import { anchor, defineTunableSet, type TunableSet } from "../mod.ts";
import {
  MATMUL_CANDIDATES,
  type MatmulConfig,
  matmulFootprint,
  matmulGrid,
  type MatmulShape,
  matmulSupports,
  matmulWgsl,
} from "./_matmul_kernels.ts";

/** What the set multiplies: C (m×n) = A (m×k) · B (k×n), f32, row-major. */
export interface MatmulInput extends MatmulShape {
  /** A, m·k floats. */
  readonly a: Handle;
  /** B, k·n floats. */
  readonly b: Handle;
  /** C, m·n floats (overwritten). */
  readonly c: Handle;
}

/** The key: anchored sizes, and whether K and N allow vec4 access. */
export type MatmulKey = {
  /** M, anchored to a power of 2. */
  readonly m: number;
  /** N, anchored. */
  readonly n: number;
  /** K, anchored. */
  readonly k: number;
  /** K and N are multiples of 4. */
  readonly vec4: boolean;
};

/** Options of {@linkcode defineMatmulSet}. */
export interface MatmulSetOptions {
  /** The kernels, in their fixed order. @default MATMUL_CANDIDATES */
  readonly kernels?: readonly MatmulConfig[];
  /** Launches a kernel (tests check the loop budget here). @default client.launch */
  readonly launch?: (kernel: Kernel, cfg: MatmulConfig, count: readonly number[], input: MatmulInput) => void;
}

/** Products at least this large (m·n·k) try the naive and tiled kernels only as a fallback. */
const LARGE = 256 ** 3;

/**
 * Defines the matmul set for a client.
 *
 * @param client The client the candidates launch on.
 * @param options Kernels and the launch hook.
 * @returns The set; each candidate launches one kernel and returns C.
 */
export function defineMatmulSet(
  client: ComputeClient,
  options: MatmulSetOptions = {},
): TunableSet<MatmulInput, Handle, MatmulKey> {
  const kernels = options.kernels ?? MATMUL_CANDIDATES;
  const hw = client.properties.hardware;
  const launch = options.launch ??
    ((kernel, _cfg, count, x) => client.launch(kernel, count, [x.a, x.b, x.c], new Uint32Array([x.m, x.n, x.k])));
  return defineTunableSet({
    name: "matmul-f32",
    key: (x: MatmulInput): MatmulKey => ({
      m: anchor(x.m),
      n: anchor(x.n),
      k: anchor(x.k),
      vec4: x.k % 4 === 0 && x.n % 4 === 0,
    }),
    groups: { blocked: 1, simple: (key) => key.m * key.n * key.k >= LARGE ? 0 : 1 },
    candidates: kernels.map((cfg) => {
      const wgsl = matmulWgsl(cfg);
      const kernel = defineKernel({ name: `matmul-${cfg.name}`, wgsl });
      const fp = matmulFootprint(cfg);
      const fits = fp.invocations <= hw.maxUnitsPerCube && fp.sharedBytes <= hw.maxSharedMemorySize;
      return {
        name: cfg.name,
        source: wgsl,
        group: cfg.kind === "blocked" ? "blocked" : "simple",
        priority: (key: MatmulKey) => fits && (cfg.vec === 1 || key.vec4) ? 0 : -1,
        run: (x: MatmulInput) => {
          if (!matmulSupports(cfg, x)) throw new RangeError(`${cfg.name} needs K and N multiples of 4`);
          launch(kernel, cfg, matmulGrid(cfg, x), x);
          return x.c;
        },
      };
    }),
  });
}
