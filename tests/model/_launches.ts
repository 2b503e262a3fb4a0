/**
 * Random launches of the modelled kernels on live handles, each with its CPU
 * effect on the model (static and indirect counts), and the launch itself.
 */

import type { ComputeClient } from "../../mod.ts";
import type { LaunchCount } from "../../src/client/client_types.ts";
import { addConstKernel, affineKernel, incKernel } from "../_gpu.ts";
import { fill3dKernel, sumKernel, xorKernel } from "./_kernels.ts";
import { checkLoopBudget } from "../_loop_budget.ts";
import { compatible, defW, getW, type LaunchSpec, type ModelState, type Ref, setW, words } from "./_state.ts";

/** A random launch of a modelled kernel on live handles, or null when no handle fits. */
export function makeLaunch(
  st: ModelState,
  allowFresh: boolean,
  unalignedOk = false,
  newKernel = false,
): LaunchSpec | null {
  const { int, chance, pick, u32 } = st.rand;
  const kind = newKernel ? 6 : int(allowFresh ? 7 : 6);
  const launchable = (minWords = 0) => st.launchableRefs(minWords, unalignedOk);
  if (kind === 0 || kind === 6) {
    // inc (or a fresh add-constant kernel): x[i] += 1 over the whole array.
    const all = launchable();
    if (all.length === 0) return null;
    const x = pick(all);
    const n = words(x);
    let kernel = incKernel;
    let add = 1;
    let label = "inc";
    if (kind === 6) {
      if (newKernel || st.freshKernels.length === 0 || chance(0.6)) {
        const k = st.nextK++;
        st.freshKernels.push({ k, kernel: addConstKernel(k) });
      }
      const f = pick(st.freshKernels);
      kernel = f.kernel;
      add = f.k;
      label = `add-${f.k}`;
    }
    const count = [Math.max(1, Math.ceil(n / 64)) + int(2)];
    return {
      kernel,
      count,
      refs: [x],
      info: undefined,
      text: `${label} [${count}] (${x.name})`,
      apply: () => {
        for (let i = 0; i < n; i++) setW(x, i, getW(x, i) + add, defW(x, i));
      },
    };
  }
  if (kind === 1 || kind === 5) {
    const all = launchable(1);
    if (all.length === 0) return null;
    const src = pick(all);
    const dst = pick(all.filter((w) => compatible(w, src)));
    const n = int(Math.min(words(src), words(dst)) + 1);
    const k = chance(0.5) ? int(5) : u32();
    const c = chance(0.5) ? int(100) : u32();
    const count = [Math.ceil(n / 64) + int(2)];
    return {
      kernel: affineKernel,
      count,
      refs: [src, dst],
      info: new Uint32Array([n, k, c]),
      text: `affine [${count}] (${src.name} -> ${dst.name}) n=${n} k=${k} c=${c}`,
      apply: affineEffect(src, dst, n, k, c),
    };
  }
  if (kind === 2) {
    const all = launchable(1);
    if (all.length === 0) return null;
    const a = pick(all);
    const b = pick(all);
    const outs = all.filter((w) => compatible(w, a) && compatible(w, b));
    if (outs.length === 0) return null;
    const out = pick(outs);
    const n = int(Math.min(words(a), words(b), words(out)) + 1);
    const count = [Math.ceil(n / 64) + int(2)];
    return {
      kernel: xorKernel,
      count,
      refs: [a, b, out],
      info: new Uint32Array([n]),
      text: `xor [${count}] (${a.name} ^ ${b.name} -> ${out.name}) n=${n}`,
      apply: () => {
        const v: number[] = [];
        const d: boolean[] = [];
        for (let i = 0; i < n; i++) {
          v.push(getW(a, i) ^ getW(b, i));
          d.push(defW(a, i) && defW(b, i));
        }
        for (let i = 0; i < n; i++) setW(out, i, v[i]!, d[i]!);
      },
    };
  }
  if (kind === 3) {
    const all = launchable(1);
    if (all.length === 0) return null;
    const src = pick(all);
    const dst = pick(all);
    const n = int(words(src) + 1);
    checkLoopBudget(sumKernel, [1], new Uint32Array([n]));
    return {
      kernel: sumKernel.kernel,
      count: [1],
      refs: [src, dst],
      info: new Uint32Array([n]),
      text: `sum [1] (${src.name} -> ${dst.name}[0]) n=${n}`,
      apply: () => {
        let s = 0;
        let d = true;
        for (let i = 0; i < n; i++) {
          s = (s + getW(src, i)) >>> 0;
          d &&= defW(src, i);
        }
        setW(dst, 0, s, d);
      },
    };
  }
  // kind 4: fill3d, a multi-dimensional dispatch.
  const all = launchable(1);
  if (all.length === 0) return null;
  const x = pick(all);
  const n = int(words(x) + 1);
  const wx = 1 + int(2);
  const wz = 1 + int(2);
  const wy = Math.max(1, Math.ceil(n / (wx * 64 * wz)));
  const v = u32();
  const count = [wx, wy, wz];
  return {
    kernel: fill3dKernel,
    count,
    refs: [x],
    info: new Uint32Array([n, v]),
    text: `fill3d [${count}] (${x.name}) n=${n} v=${v}`,
    apply: () => {
      for (let i = 0; i < n; i++) setW(x, i, v + 3 * i, true);
    },
  };
}

/**
 * The model of `to = from * k + c` (wrapping u32) over `n` words; `from` is
 * read in full before `to` is written, so the two may overlap.
 */
function affineEffect(from: Ref, to: Ref, n: number, k: number, c: number): () => void {
  return () => {
    const v: number[] = [];
    const d: boolean[] = [];
    for (let i = 0; i < n; i++) {
      v.push(getW(from, i));
      d.push(defW(from, i));
    }
    for (let i = 0; i < n; i++) setW(to, i, Math.imul(v[i]!, k) + c, d[i]!);
  };
}

/**
 * An affine launch `to = from * k + c` over `n` words (the effect is read from
 * the model when applied: `from` may be a temporary of a capture).
 */
export function makeAffine(
  st: ModelState,
  from: Ref,
  to: Ref,
  n: number,
  k: number,
  c: number,
  text: string,
): LaunchSpec {
  return {
    kernel: affineKernel,
    count: [Math.ceil(n / 64) + st.rand.int(2)],
    refs: [from, to],
    info: new Uint32Array([n, k, c]),
    text,
    apply: affineEffect(from, to, n, k, c),
  };
}

/**
 * Launches `spec`; true when it was the kernel's first launch on this client.
 * A launch binding a view at an unaligned offset may instead be refused at
 * once with a RangeError or TypeError: then it returns null (no effect).
 */
export function launchOn(st: ModelState, c: ComputeClient, spec: LaunchSpec): boolean | null {
  try {
    let count = spec.count;
    if (Array.isArray(count) && st.rand.chance(0.1)) {
      count = { kind: "static", x: count[0]!, y: count[1] ?? 1, z: count[2] ?? 1 }; // the CubeCount form
    }
    c.launch(spec.kernel, count, spec.refs.map((r) => r.h), spec.info);
  } catch (e) {
    if (spec.refs.some((r) => st.unaligned(r)) && (e instanceof RangeError || e instanceof TypeError)) return null;
    throw e;
  }
  if (st.launched.has(spec.kernel)) return false;
  st.launched.add(spec.kernel);
  return true;
}

/**
 * An indirect launch of inc or fill3d counted by `cnt`. The effect reads the
 * counts from the model when applied, as the device reads them when it runs
 * (a replayed graph reads them at replay time). `conflict` also binds the
 * count memory as the kernel's buffer (the runtime copies the counts first).
 */
export function makeIndirect(st: ModelState, cnt: Ref, conflict: boolean): LaunchSpec | null {
  const { int, chance, pick, u32 } = st.rand;
  const inc = chance(0.5);
  const targets = conflict ? [cnt] : st.launchableRefs(inc ? 0 : 1);
  if (targets.length === 0) return null;
  const x = pick(targets);
  const count: LaunchCount = chance(0.5) ? cnt.h : { kind: "dynamic", binding: cnt.h };
  const form = cnt.h === count ? "handle" : "dynamic";
  const covered = (): number => {
    const w = st.countsOf(cnt);
    if (w === null) throw new Error(`indirect counts of ${cnt.name} are not defined in the model`);
    return w[0] * w[1] * w[2] * 64; // inc: 64 invocations per workgroup; fill3d: 8 × 8 × 1
  };
  if (inc) {
    return {
      kernel: incKernel,
      count,
      countRef: cnt,
      refs: [x],
      info: undefined,
      text: `inc indirect(${cnt.name}, ${form}) (${x.name})`,
      apply: () => {
        const n = Math.min(words(x), covered());
        for (let i = 0; i < n; i++) setW(x, i, getW(x, i) + 1, defW(x, i));
      },
    };
  }
  const n = int(words(x) + 1);
  const v = u32();
  return {
    kernel: fill3dKernel,
    count,
    countRef: cnt,
    refs: [x],
    info: new Uint32Array([n, v]),
    text: `fill3d indirect(${cnt.name}, ${form}) (${x.name}) n=${n} v=${v}`,
    apply: () => {
      const m = Math.min(n, covered());
      for (let i = 0; i < m; i++) setW(x, i, v + 3 * i, true);
    },
  };
}
