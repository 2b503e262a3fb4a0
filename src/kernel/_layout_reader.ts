/**
 * The kernel layout reader: the workgroup size, `@group(0)` binding count and
 * workgroup memory of an entry point, read from WGSL source so launches can
 * be checked before WebGPU sees them.
 *
 * Attributes are read as WGSL reads them. `@group`, `@binding` and `@id` take
 * const-expressions, `@workgroup_size` and workgroup array lengths also take
 * override-expressions: integer literals (`1u`, `0i`, `0x1`), module-scope
 * `const` and `override` declarations, operators and a few builtins (see
 * `_const_expr.ts`). An override takes the pipeline constant keyed as
 * WebGPU's `constants` record keys it: by the decimal value of its `@id` when
 * it has one (`@id(0)` is key `"0"`), else by its name.
 *
 * A `@group`, `@binding` or `@id` the reader needs and cannot evaluate throws
 * a `KernelLayoutError`: a binding count read from some declarations only, or
 * an override read with its default instead of its constant, would misjudge
 * every launch. A workgroup size or workgroup array the reader cannot
 * evaluate leaves that fact unknown (null), and WebGPU judges it alone.
 *
 * @module
 */

import { KernelLayoutError } from "../errors/kernel_errors.ts";
import type { KernelLayout } from "./kernel.ts";
import { assign, constantAs, evaluate, isInteger, type Scalar, type ScalarType, Unevaluable } from "./_const_expr.ts";
import {
  type Attribute,
  type Declaration,
  entryPointUses,
  IDENT,
  moduleDeclarations,
  splitTopLevel,
  stripComments,
} from "./_wgsl_source.ts";

const CONST_DECL = new RegExp(String.raw`^const\s+(${IDENT})\s*(?::([^=]*))?=([\s\S]*)$`, "u");
const OVERRIDE_DECL = new RegExp(String.raw`^override\s+(${IDENT})\s*(?::([^=]*))?(?:=([\s\S]*))?$`, "u");
const VAR_DECL = new RegExp(String.raw`^var\s*(?:<([^>]*)>)?\s*(${IDENT})\s*(?::([^=]*))?(?:=[\s\S]*)?$`, "u");
const FN_DECL = new RegExp(String.raw`^fn\s+(${IDENT})\s*\(`, "u");

const SCALAR_BYTES: Readonly<Record<string, number>> = { f32: 4, i32: 4, u32: 4, f16: 2, bool: 4 };
const SCALAR_TYPES: ReadonlySet<string> = new Set(["u32", "i32", "f32", "f16", "bool"]);

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

/** A module-scope `const` or `override`. */
interface Named {
  readonly kind: "const" | "override";
  readonly type: ScalarType | null;
  /** The written type when it is not a scalar the reader knows. */
  readonly otherType: string | null;
  readonly init: string | null;
  readonly id: Attribute | null;
}

/** The values of one module's `const` and `override` declarations, resolved on demand. */
class ModuleScope {
  #kernel: string;
  #names = new Map<string, Named>();
  #constants: Readonly<Record<string, number>>;
  #values = new Map<string, Scalar | Unevaluable>();
  #resolving = new Set<string>();

  constructor(kernel: string, decls: readonly Declaration[], constants: Readonly<Record<string, number>>) {
    this.#kernel = kernel;
    this.#constants = constants;
    for (const d of decls) {
      const c = CONST_DECL.exec(d.rest);
      const m = c ?? OVERRIDE_DECL.exec(d.rest);
      if (m === null || this.#names.has(m[1]!)) continue; // a second declaration of a name is a WGSL error
      const written = m[2]?.trim() ?? "";
      this.#names.set(m[1]!, {
        kind: c !== null ? "const" : "override",
        type: SCALAR_TYPES.has(written) ? written as ScalarType : null,
        otherType: written === "" || SCALAR_TYPES.has(written) ? null : written,
        init: m[3]?.trim() ?? null,
        id: d.attributes.find((a) => a.name === "id") ?? null,
      });
    }
  }

  /**
   * The value of a module-scope name.
   *
   * @param name The identifier.
   * @param constOnly True in a const-expression, where an override is not allowed.
   * @returns Its value: an override's constant when one is given under its key, else its initializer's.
   * @throws {Unevaluable} When it is not declared, or its value cannot be worked out.
   * @throws {KernelLayoutError} When it is an override whose `@id` cannot be evaluated.
   */
  value(name: string, constOnly: boolean): Scalar {
    const named = this.#names.get(name);
    if (named === undefined) throw new Unevaluable(`"${name}" is not declared as a module-scope const or override`);
    if (constOnly && named.kind === "override") {
      throw new Unevaluable(`"${name}" is an override, and this attribute takes a const-expression`);
    }
    const known = this.#values.get(name);
    if (known instanceof Unevaluable) throw known;
    if (known !== undefined) return known;
    if (this.#resolving.has(name)) throw new Unevaluable(`"${name}" depends on itself`);
    this.#resolving.add(name);
    try {
      const v = this.#resolve(name, named);
      this.#values.set(name, v);
      return v;
    } catch (e) {
      if (e instanceof Unevaluable) this.#values.set(name, e);
      throw e;
    } finally {
      this.#resolving.delete(name);
    }
  }

  #resolve(name: string, named: Named): Scalar {
    if (named.otherType !== null) throw new Unevaluable(`"${name}" has type ${named.otherType}, not a scalar`);
    const key = named.id === null ? name : String(this.attribute(named.id, `of override "${name}"`));
    const given = Object.hasOwn(this.#constants, key) ? this.#constants[key] : undefined;
    const initial = () => {
      if (named.init === null) {
        throw new Unevaluable(`override "${name}" has no default, and no constant "${key}" is given`);
      }
      try {
        return evaluate(named.init, (n) => this.value(n, named.kind === "const"));
      } catch (e) {
        if (e instanceof Unevaluable) throw new Unevaluable(`${named.kind} "${name}" = ${named.init}: ${e.message}`);
        throw e;
      }
    };
    if (named.kind === "override" && given !== undefined) {
      return constantAs(given, named.type ?? concrete(initial().type));
    }
    const v = initial();
    if (named.type !== null) return assign(v, named.type, `${named.kind} "${name}"`);
    return named.kind === "const" ? v : assign(v, concrete(v.type), `override "${name}"`);
  }

  /**
   * The value of a `@group`, `@binding` or `@id` attribute: a non-negative
   * integer const-expression.
   *
   * @param attr The attribute.
   * @param where What it is attached to, for the error.
   * @returns Its value.
   * @throws {KernelLayoutError} When it cannot be evaluated, or is not a non-negative integer.
   */
  attribute(attr: Attribute, where: string): number {
    const fail = (reason: string) =>
      new KernelLayoutError(this.#kernel, `@${attr.name}`, attr.args.join(", "), where, reason);
    if (attr.args.length !== 1) throw fail(`it takes one expression, got ${attr.args.length}`);
    let v: Scalar;
    try {
      v = evaluate(attr.args[0]!, (n) => this.value(n, true));
    } catch (e) {
      if (e instanceof Unevaluable) throw fail(e.message);
      throw e;
    }
    if (!isInteger(v.type)) throw fail(`it must be an i32 or u32 integer, got ${v.type}`);
    if (v.value < 0) throw fail(`it must not be negative, got ${v.value}`);
    return v.value;
  }

  /**
   * A positive integer override-expression (a workgroup size or array length), or null when unknown.
   *
   * @param expr The expression.
   * @returns Its value, or null when it cannot be evaluated or is not a positive integer.
   */
  count(expr: string): number | null {
    try {
      const v = evaluate(expr, (n) => this.value(n, false));
      return isInteger(v.type) && v.value > 0 ? v.value : null;
    } catch (e) {
      if (e instanceof Unevaluable) return null;
      throw e;
    }
  }
}

/** The concrete type an abstract value takes (an `override` without a written type). */
function concrete(type: ScalarType): ScalarType {
  return type === "abstract-int" ? "i32" : type === "abstract-float" ? "f32" : type;
}

/**
 * Reads workgroup size, binding count and workgroup memory of an entry point.
 *
 * @param kernel Name of the kernel, for errors.
 * @param wgsl WGSL source.
 * @param entryPoint The entry point.
 * @param constants Pipeline constants, keyed as WebGPU keys them.
 * @returns What could be read.
 * @throws {KernelLayoutError} When a `@group`, `@binding` or `@id` the layout depends on cannot be evaluated.
 */
export function readLayout(
  kernel: string,
  wgsl: string,
  entryPoint: string,
  constants: Readonly<Record<string, number>>,
): KernelLayout {
  const src = stripComments(wgsl);
  const decls = moduleDeclarations(src);
  const scope = new ModuleScope(kernel, decls, constants);
  const used = entryPointUses(src, entryPoint);
  let workgroupSize: [number, number, number] | null = null;
  const entry = decls.find((d) => FN_DECL.exec(d.rest)?.[1] === entryPoint);
  const ws = entry?.attributes.find((a) => a.name === "workgroup_size");
  if (ws !== undefined && ws.args.length >= 1 && ws.args.length <= 3) {
    const dims = ws.args.map((a) => scope.count(a));
    if (dims.every((d) => d !== null)) workgroupSize = [dims[0]!, dims[1] ?? 1, dims[2] ?? 1];
  }
  const bindingIndices = new Set<number>();
  let shared: number | null = 0;
  for (const d of decls) {
    const v = VAR_DECL.exec(d.rest);
    if (v === null || (used !== null && !used.has(v[2]!))) continue;
    const group = d.attributes.find((a) => a.name === "group");
    const binding = d.attributes.find((a) => a.name === "binding");
    if (group !== undefined && binding !== undefined) {
      const where = `of var "${v[2]}"`;
      if (scope.attribute(group, where) === 0) bindingIndices.add(scope.attribute(binding, where));
    }
    if (shared !== null && v[1]?.trim() === "workgroup") {
      const bytes = v[3] === undefined ? null : typeBytes(v[3], (e) => scope.count(e));
      shared = bytes === null ? null : shared + Math.ceil(bytes / 4) * 4;
    }
  }
  const bindings = bindingIndices.size === 0 ? null : Math.max(...bindingIndices) + 1;
  return { workgroupSize, bindings, sharedMemoryBytes: shared };
}
