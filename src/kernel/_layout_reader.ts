/**
 * The kernel layout reader: the workgroup size, bindings and workgroup memory
 * of an entry point, read from WGSL source so launches can be checked before
 * WebGPU sees them, and the source the runtime compiles (see `_bindings.ts`).
 *
 * Attributes are read as WGSL reads them. `@group`, `@binding` and `@id` take
 * const-expressions, `@workgroup_size` and workgroup array lengths also take
 * override-expressions: integer literals (`1u`, `0i`, `0x1`), module-scope
 * `const` and `override` declarations, operators and a few builtins (see
 * `_const_expr.ts` and `_module_scope.ts`).
 *
 * A `@group`, `@binding` or `@id` the reader needs and cannot evaluate throws
 * a `KernelLayoutError`: a binding count read from some declarations only, or
 * an override read with its default instead of its constant, would misjudge
 * every launch. A workgroup size or workgroup array the reader cannot
 * evaluate leaves that fact unknown (null), and WebGPU judges it alone.
 *
 * @module
 */

import { type BindingPlan, planBindings } from "./_bindings.ts";
import { ModuleScope } from "./_module_scope.ts";
import {
  entryPointCount,
  moduleDeclarations,
  reachableNames,
  splitTopLevel,
  stripComments,
  VAR_DECL,
} from "./_wgsl_source.ts";
import type { KernelLayout } from "../contract/kernel.ts";

const FN_DECL = /^fn\s+([\p{XID_Start}_]\p{XID_Continue}*)\s*\(/u;

const SCALAR_BYTES: Readonly<Record<string, number>> = { f32: 4, i32: 4, u32: 4, f16: 2, bool: 4 };

/** Bytes of a WGSL type made of scalars, vectors, matrices, atomics and fixed arrays, or null. */
function typeBytes(type: string, length: (expr: string) => number | null): number | null {
  const arr = /^array\s*<([\s\S]*)>$/.exec(type.trim());
  if (arr) {
    const args = splitTopLevel(arr[1]!);
    if (args.length !== 2) return null;
    const inner = typeBytes(args[0]!, length);
    const n = length(args[1]!);
    return inner === null || n === null ? null : inner * n;
  }
  const t = type.replace(/\s+/g, "");
  if (t in SCALAR_BYTES) return SCALAR_BYTES[t]!;
  if (/^atomic<[iu]32>$/.test(t)) return 4;
  const vec = /^vec([234])(?:<(\w+)>|([fiuh]))$/.exec(t);
  if (vec) {
    const n = Number(vec[1]);
    const elem = vec[2] ?? ({ f: "f32", i: "i32", u: "u32", h: "f16" } as Record<string, string>)[vec[3]!]!;
    const e = SCALAR_BYTES[elem];
    return e === undefined ? null : (n === 3 ? 4 : n) * e;
  }
  const mat = /^mat([234])x([234])(?:<(\w+)>|([fh]))$/.exec(t);
  if (mat) {
    const cols = Number(mat[1]);
    const rows = Number(mat[2]);
    const e = (mat[3] ?? (mat[4] === "h" ? "f16" : "f32")) === "f16" ? 2 : 4;
    return cols * (rows === 3 ? 4 : rows) * e;
  }
  return null;
}

/** What the layout reader reads from a kernel's source. */
export interface KernelReading {
  /** Launch facts. */
  readonly layout: KernelLayout;
  /** The bindings, and the sources to compile. */
  readonly plan: BindingPlan;
}

/**
 * Reads workgroup size, bindings and workgroup memory of an entry point, and
 * builds the sources the runtime compiles for it.
 *
 * @param kernel Name of the kernel, for errors.
 * @param wgsl WGSL source.
 * @param entryPoint The entry point.
 * @param constants Pipeline constants, keyed as WebGPU keys them.
 * @returns What could be read.
 * @throws {KernelLayoutError} When a binding cannot be bound, or a `@group`, `@binding` or `@id` the layout depends
 * on cannot be evaluated.
 */
export function readLayout(
  kernel: string,
  wgsl: string,
  entryPoint: string,
  constants: Readonly<Record<string, number>>,
): KernelReading {
  const src = stripComments(wgsl);
  const decls = moduleDeclarations(src);
  const scope = new ModuleScope(kernel, src, decls, constants);
  const plan = planBindings(kernel, wgsl, src, decls, scope, entryPoint);
  // In a module of several entry points, the workgroup memory of the others is not this pipeline's.
  const reach = entryPointCount(src) >= 2 ? reachableNames(src, entryPoint) : null;
  let workgroupSize: [number, number, number] | null = null;
  const entry = decls.find((d) => FN_DECL.exec(d.rest)?.[1] === entryPoint);
  const ws = entry?.attributes.find((a) => a.name === "workgroup_size");
  if (ws !== undefined && ws.args.length >= 1 && ws.args.length <= 3) {
    const dims = ws.args.map((a) => scope.count(a));
    if (dims.every((d) => d !== null)) workgroupSize = [dims[0]!, dims[1] ?? 1, dims[2] ?? 1];
  }
  let shared: number | null = 0;
  for (const d of decls) {
    const v = VAR_DECL.exec(d.rest);
    if (v === null || v[1]?.trim() !== "workgroup" || (reach !== null && !reach.has(v[2]!))) continue;
    const bytes = v[3] === undefined ? null : typeBytes(v[3], (e) => scope.count(e));
    shared = bytes === null ? null : shared + Math.ceil(bytes / 4) * 4;
    if (shared === null) break;
  }
  const layout = {
    workgroupSize,
    bindings: plan.names.length === 0 ? null : plan.names.length,
    bindingNames: plan.names,
    bindingKinds: plan.kinds,
    bindingSizes: plan.sizes,
    sharedMemoryBytes: shared,
  };
  return { layout, plan };
}
