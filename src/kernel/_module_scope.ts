/**
 * The module scope of a WGSL source for the layout reader: the values of its
 * `const` and `override` declarations, resolved on demand, and the
 * `@group`, `@binding` and `@id` attributes and override-expressions that
 * use them. An override takes the pipeline constant keyed as WebGPU's
 * `constants` record keys it: by the decimal value of its `@id` when it has
 * one (`@id(0)` is key `"0"`), else by its name.
 *
 * @module
 */

import { KernelLayoutError } from "../errors/kernel_errors.ts";
import { assign, constantAs, evaluate, isInteger, type Scalar, type ScalarType, Unevaluable } from "./_const_expr.ts";
import { type Attribute, type Declaration, declarationText, IDENT } from "./_wgsl_source.ts";

const CONST_DECL = new RegExp(String.raw`^const\s+(${IDENT})\s*(?::([^=]*))?=([\s\S]*)$`, "u");
const OVERRIDE_DECL = new RegExp(String.raw`^override\s+(${IDENT})\s*(?::([^=]*))?(?:=([\s\S]*))?$`, "u");
const SCALAR_TYPES: ReadonlySet<string> = new Set(["u32", "i32", "f32", "f16", "bool"]);

/** A module-scope `const` or `override`. */
interface Named {
  readonly kind: "const" | "override";
  readonly type: ScalarType | null;
  /** The written type when it is not a scalar the reader knows. */
  readonly otherType: string | null;
  readonly init: string | null;
  readonly id: Attribute | null;
  /** The declaration as written, for errors. */
  readonly text: string;
}

/**
 * The values of one module's `const` and `override` declarations, resolved on
 * demand, and the attributes that use them.
 */
export class ModuleScope {
  #kernel: string;
  #names = new Map<string, Named>();
  #constants: Readonly<Record<string, number>>;
  #values = new Map<string, Scalar | Unevaluable>();
  #resolving = new Set<string>();

  /**
   * Creates the scope.
   *
   * @param kernel Name of the kernel, for errors.
   * @param src The source, comments blanked.
   * @param decls Its module-scope declarations.
   * @param constants Pipeline constants, keyed as WebGPU keys them.
   */
  constructor(
    kernel: string,
    src: string,
    decls: readonly Declaration[],
    constants: Readonly<Record<string, number>>,
  ) {
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
        text: declarationText(src, d),
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
    const key = named.id === null ? name : String(this.attribute(named.id, named.text));
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
   * @param declaration The declaration it is attached to, as written, for the error.
   * @returns Its value.
   * @throws {KernelLayoutError} When it cannot be evaluated, or is not a non-negative integer.
   */
  attribute(attr: Attribute, declaration: string): number {
    const fail = (reason: string) =>
      new KernelLayoutError(this.#kernel, {
        kind: "unevaluable",
        declaration,
        attribute: `@${attr.name}`,
        expression: attr.args.join(", "),
        reason,
        fix: "Write it as an integer literal, a module-scope const, or a const-expression over them.",
      });
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
