/**
 * The launch door alone (`checkLaunch`, no GPU work), this tree against
 * another copy, interleaved in one process: a million checks of a two-binding
 * launch alternating two kernels per sample, 30 samples each. A diagnostic for
 * the launch-cost A/B (`ab_trees.ts`): it tells the door's share of a change
 * from the rest of the launch path. Run 36: this tree 21.9 ns per check
 * (median) against 18.7 ns for 9b37598, the tree before the door's size and fit
 * checks (879a684), while `client.launch` differed by about 20 ns.
 *
 * ```
 * mkdir -p .device/pre && git archive 9b37598 mod.ts src | tar -x -C .device/pre
 * OLD=.device/pre deno run --allow-read --allow-env bench/door_ab.ts
 * ```
 */

import { COPY_WGSL, median, MIX_WGSL } from "./_raw.ts";

const oldPath = Deno.env.get("OLD");
if (!oldPath) {
  console.error("door_ab: set OLD to the other tree's root (a folder holding its mod.ts)");
  Deno.exit(2);
}

const CHECKS = 1_000_000;
const SAMPLES = 30;

// deno-lint-ignore no-explicit-any
type Any = any;

/** One tree's door over two handles of one owner; returns a sampler (ns per check). */
async function door(root: string): Promise<() => number> {
  const url = (path: string) => new URL(`${root.replace(/\/$/, "")}/${path}`, `file://${Deno.cwd()}/`).href;
  const mod: Any = await import(url("mod.ts"));
  const checks: Any = await import(url("src/contract/launch_checks.ts"));
  const { Handle }: Any = await import(url("src/contract/handle.ts"));
  const { ManagedMemory }: Any = await import(url("src/contract/managed_memory.ts"));
  const owner = {};
  // Trees before 879a684 take the limits as a plain object; later ones build them from device properties.
  const limits = checks.launchLimits === undefined
    ? { owner, maxCount: 65535, maxBinding: 1 << 27, storageAlign: 256 }
    : checks.launchLimits(owner, {
      limits: { minStorageBufferOffsetAlignment: 256 },
      hardware: {
        maxCubeCount: [65535, 65535, 65535],
        maxCubeDim: [1024, 1024, 64],
        maxUnitsPerCube: 1024,
        maxSharedMemorySize: 16384,
      },
      memory: { maxPageSize: 1 << 27 },
    });
  const mix = mod.defineKernel({ name: "mix", wgsl: MIX_WGSL });
  const copy = mod.defineKernel({ name: "copy", wgsl: COPY_WGSL });
  const handles = [new Handle(owner, new ManagedMemory(), 0, 256), new Handle(owner, new ManagedMemory(), 0, 256)];
  const check = checks.checkLaunch;
  return () => {
    const t0 = performance.now();
    for (let i = 0; i < CHECKS; i++) check(limits, i % 2 === 0 ? mix : copy, handles, null, 1, 1, 1, null, "execute");
    return (performance.now() - t0) * 1e6 / CHECKS;
  };
}

const mine = await door(".");
const other = await door(oldPath);
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < SAMPLES; r++) {
  a.push(mine());
  b.push(other());
}
console.log(
  `checkLaunch, ns per check (median, min): this tree ${median(a).toFixed(1)}, ${Math.min(...a).toFixed(1)}; ` +
    `other tree ${median(b).toFixed(1)}, ${Math.min(...b).toFixed(1)}; this ÷ other ${
      (median(a) / median(b)).toFixed(3)
    }`,
);
