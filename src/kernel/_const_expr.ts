/**
 * A WGSL const-expression evaluator for the layout reader: scalar literals
 * (integers with `i`/`u` suffixes, in decimal or hex; floats; `true`/`false`),
 * identifiers resolved by the caller, parentheses, the unary and binary
 * operators, and a few builtins (`u32`, `i32`, `f32`, `f16`, `bool`, `abs`,
 * `min`, `max`, `clamp`, `select`). Values carry their WGSL type, and the
 * rules of WGSL's constant evaluation apply: abstract integers take the
 * concrete type of the other operand, `i32` and `u32` do not mix, and an
 * overflow, a division by zero or an over-wide shift is an error, as it is a
 * shader-creation error in WGSL. Anything else (vectors, arrays, other
 * builtins) is `Unevaluable`.
 *
 * @module
 */

/** The type of a WGSL scalar value. */
export type ScalarType = "abstract-int" | "abstract-float" | "i32" | "u32" | "f32" | "f16" | "bool";

/** A scalar value and its WGSL type (`bool` values are 0 or 1). */
export interface Scalar {
  /** The value. */
  readonly value: number;
  /** Its type. */
  readonly type: ScalarType;
}

/** Why an expression could not be evaluated; the message says what was not understood. */
export class Unevaluable extends Error {}

/** Resolves an identifier to its value, or throws `Unevaluable`. */
export type Resolve = (name: string) => Scalar;

const TOKEN = new RegExp(
  [
    String.raw`(?<space>\s+)`,
    String.raw`(?<hex>0[xX][0-9a-fA-F]+[iu]?)(?![\w.])`,
    String
      .raw`(?<float>(?:(?:[0-9]*\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)[fh]?|(?:0|[1-9][0-9]*)[fh])(?![\w.])`,
    String.raw`(?<int>(?:0|[1-9][0-9]*)[iu]?)(?![\w.])`,
    String.raw`(?<ident>[\p{XID_Start}_]\p{XID_Continue}*)`,
    String.raw`(?<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>(),])`,
  ].join("|"),
  "uy",
);

/** Binding power of each binary operator (WGSL forbids the mixes where C's order would differ). */
const BINARY: Readonly<Record<string, number>> = {
  "||": 1,
  "&&": 2,
  "|": 3,
  "^": 4,
  "&": 5,
  "==": 6,
  "!=": 6,
  "<": 7,
  ">": 7,
  "<=": 7,
  ">=": 7,
  "<<": 8,
  ">>": 8,
  "+": 9,
  "-": 9,
  "*": 10,
  "/": 10,
  "%": 10,
};

/**
 * True for the integer types: abstract, `i32` and `u32`.
 *
 * @param t The type.
 * @returns Whether it is an integer type.
 */
export function isInteger(t: ScalarType): boolean {
  return t === "abstract-int" || t === "i32" || t === "u32";
}

const isFloat = (t: ScalarType): boolean => t === "abstract-float" || t === "f32" || t === "f16";

/** Checks that `value` is representable in `type` (WGSL's constant evaluation rejects what is not). */
function fit(value: number, type: ScalarType): Scalar {
  const bad = (what: string) => new Unevaluable(`${what} does not fit ${type}`);
  switch (type) {
    case "i32":
      if (value < -(2 ** 31) || value >= 2 ** 31) throw bad(String(value));
      break;
    case "u32":
      if (value < 0 || value >= 2 ** 32) throw bad(String(value));
      break;
    case "abstract-int":
      if (!Number.isSafeInteger(value)) throw new Unevaluable(`${value} is beyond the integers read exactly (2^53)`);
      break;
    case "f32":
      value = Math.fround(value);
      if (!Number.isFinite(value)) throw bad(String(value));
      break;
    case "bool":
      value = value ? 1 : 0;
      break;
    default:
      if (!Number.isFinite(value)) throw bad(String(value));
  }
  return { value: value === 0 ? 0 : value, type };
}

/** The common type of two operands, abstract ones taking the other's type. */
function unify(a: ScalarType, b: ScalarType, op: string): ScalarType {
  if (a === b) return a;
  const rank = (t: ScalarType) => t === "abstract-int" ? 0 : t === "abstract-float" ? 1 : 2;
  const [lo, hi] = rank(a) <= rank(b) ? [a, b] : [b, a];
  if (lo === "abstract-int" && hi !== "bool") return hi;
  if (lo === "abstract-float" && isFloat(hi)) return hi;
  throw new Unevaluable(`"${op}" cannot combine ${a} and ${b}`);
}

/** Converts a value to `type` as WGSL's value constructors do (`u32(x)`, `f32(x)`, ...). */
function convert(v: Scalar, type: ScalarType): Scalar {
  if (type === "bool") return { value: v.value !== 0 ? 1 : 0, type };
  if (isFloat(type)) return fit(v.value, type);
  if (v.type === "i32" && type === "u32") return { value: v.value >>> 0, type }; // a bit cast in WGSL
  if (v.type === "u32" && type === "i32") return { value: v.value | 0, type };
  return fit(isFloat(v.type) ? Math.trunc(v.value) : v.value, type);
}

/** Integer operators computed exactly, as 64-bit two's complement. */
function bitwise(op: string, a: Scalar, b: Scalar, type: ScalarType): Scalar {
  const x = BigInt(a.value);
  const y = BigInt(b.value);
  if (op === "<<" || op === ">>") {
    const width = type === "abstract-int" ? 64 : 32;
    if (b.value < 0 || b.value >= width) throw new Unevaluable(`a shift by ${b.value} is not below ${width}`);
    if (op === ">>") return { value: Number(x >> y), type };
    return fit(Number(x << y), type);
  }
  const r = op === "&" ? x & y : op === "|" ? x | y : x ^ y;
  return { value: Number(type === "u32" ? BigInt.asUintN(32, r) : BigInt.asIntN(64, r)), type };
}

/** Applies a binary operator, with WGSL's typing and overflow rules. */
function binary(op: string, a: Scalar, b: Scalar): Scalar {
  if (op === "&&" || op === "||") {
    if (a.type !== "bool" || b.type !== "bool") throw new Unevaluable(`"${op}" needs bool operands`);
    return { value: op === "&&" ? a.value & b.value : a.value | b.value, type: "bool" };
  }
  if (op === "<<" || op === ">>") {
    if (!isInteger(a.type) || (b.type !== "u32" && b.type !== "abstract-int")) {
      throw new Unevaluable(`"${op}" needs an integer and a u32 shift`);
    }
    return bitwise(op, a, b, a.type);
  }
  const type = unify(a.type, b.type, op);
  const x = a.value;
  const y = b.value;
  switch (op) {
    case "==":
      return { value: x === y ? 1 : 0, type: "bool" };
    case "!=":
      return { value: x !== y ? 1 : 0, type: "bool" };
    case "<":
      return { value: x < y ? 1 : 0, type: "bool" };
    case ">":
      return { value: x > y ? 1 : 0, type: "bool" };
    case "<=":
      return { value: x <= y ? 1 : 0, type: "bool" };
    case ">=":
      return { value: x >= y ? 1 : 0, type: "bool" };
  }
  if (type === "bool") {
    if (op === "&" || op === "|") return { value: op === "&" ? x & y : x | y, type };
    throw new Unevaluable(`"${op}" does not apply to bool`);
  }
  if (op === "&" || op === "|" || op === "^") {
    if (!isInteger(type)) throw new Unevaluable(`"${op}" needs integer operands`);
    return bitwise(op, a, b, type);
  }
  if ((op === "/" || op === "%") && y === 0 && isInteger(type)) throw new Unevaluable(`${x} ${op} 0 divides by zero`);
  const raw = op === "+" ? x + y : op === "-" ? x - y : op === "*" ? x * y : op === "/" ? x / y : x % y;
  return fit(isInteger(type) && op === "/" ? Math.trunc(raw) : raw, type);
}

/** Applies `-`, `!` or `~`. */
function unary(op: string, v: Scalar): Scalar {
  if (op === "!") {
    if (v.type !== "bool") throw new Unevaluable(`"!" needs a bool`);
    return { value: 1 - v.value, type: "bool" };
  }
  if (op === "~") {
    if (!isInteger(v.type)) throw new Unevaluable(`"~" needs an integer`);
    const r = ~BigInt(v.value);
    return { value: Number(v.type === "u32" ? BigInt.asUintN(32, r) : r), type: v.type };
  }
  if (v.type === "u32" || v.type === "bool") throw new Unevaluable(`"-" does not apply to ${v.type}`);
  return fit(-v.value, v.type);
}

const CONVERSIONS: Readonly<Record<string, ScalarType>> = {
  u32: "u32",
  i32: "i32",
  f32: "f32",
  f16: "f16",
  bool: "bool",
};

/** Calls one of the builtins the reader evaluates. */
function call(name: string, args: Scalar[]): Scalar {
  const conversion = CONVERSIONS[name];
  if (conversion !== undefined && args.length <= 1) {
    return args.length === 0 ? { value: 0, type: conversion } : convert(args[0]!, conversion);
  }
  const [a, b, c] = args;
  if (name === "abs" && args.length === 1) return a!.type === "u32" ? a! : fit(Math.abs(a!.value), a!.type);
  if ((name === "min" || name === "max") && args.length === 2) {
    const type = unify(a!.type, b!.type, name);
    return { value: Math[name](a!.value, b!.value), type };
  }
  if (name === "clamp" && args.length === 3) {
    const type = unify(unify(a!.type, b!.type, name), c!.type, name);
    return { value: Math.min(Math.max(a!.value, b!.value), c!.value), type };
  }
  if (name === "select" && args.length === 3 && c!.type === "bool") {
    const type = unify(a!.type, b!.type, name);
    return { value: c!.value ? b!.value : a!.value, type };
  }
  throw new Unevaluable(
    `"${name}(...)" with ${args.length} argument${
      args.length === 1 ? "" : "s"
    } is not a call the layout reader evaluates (it knows u32, i32, f32, f16, bool, abs, min, max, clamp and select)`,
  );
}

/** One parse of one expression: a token list and a cursor. */
class Parser {
  #tokens: { kind: string; text: string }[] = [];
  #at = 0;
  #resolve: Resolve;

  constructor(text: string, resolve: Resolve) {
    this.#resolve = resolve;
    TOKEN.lastIndex = 0;
    while (TOKEN.lastIndex < text.length) {
      const from = TOKEN.lastIndex;
      const m = TOKEN.exec(text);
      if (m === null) {
        throw new Unevaluable(`"${text.slice(from, from + 12)}" is not an expression the layout reader reads`);
      }
      const kind = Object.keys(m.groups!).find((k) => m.groups![k] !== undefined)!;
      if (kind !== "space") this.#tokens.push({ kind, text: m[0] });
    }
  }

  /** Evaluates the whole expression. */
  run(): Scalar {
    if (this.#tokens.length === 0) throw new Unevaluable("the expression is empty");
    const v = this.#expr(0);
    const rest = this.#tokens[this.#at];
    if (rest !== undefined) throw new Unevaluable(`"${rest.text}" was not expected there`);
    return v;
  }

  #expr(minPower: number): Scalar {
    let left = this.#unary();
    for (;;) {
      const t = this.#tokens[this.#at];
      const power = t?.kind === "op" ? BINARY[t.text] : undefined;
      if (power === undefined || power <= minPower) return left;
      this.#at++;
      left = binary(t!.text, left, this.#expr(power));
    }
  }

  #unary(): Scalar {
    const t = this.#tokens[this.#at];
    if (t?.kind === "op" && (t.text === "-" || t.text === "!" || t.text === "~")) {
      this.#at++;
      return unary(t.text, this.#unary());
    }
    return this.#primary();
  }

  #primary(): Scalar {
    const t = this.#tokens[this.#at++];
    if (t === undefined) throw new Unevaluable("the expression ends too early");
    switch (t.kind) {
      case "hex":
      case "int": {
        const suffix = /[iu]$/.exec(t.text)?.[0];
        const digits = suffix ? t.text.slice(0, -1) : t.text;
        return fit(Number(digits), suffix === "u" ? "u32" : suffix === "i" ? "i32" : "abstract-int");
      }
      case "float": {
        const suffix = /[fh]$/.exec(t.text)?.[0];
        const value = Number(suffix ? t.text.slice(0, -1) : t.text);
        return fit(value, suffix === "f" ? "f32" : suffix === "h" ? "f16" : "abstract-float");
      }
      case "ident": {
        if (t.text === "true" || t.text === "false") return { value: t.text === "true" ? 1 : 0, type: "bool" };
        if (this.#tokens[this.#at]?.text !== "(") return this.#resolve(t.text);
        this.#at++;
        const args: Scalar[] = [];
        while (this.#tokens[this.#at]?.text !== ")") {
          args.push(this.#expr(0));
          if (this.#tokens[this.#at]?.text === ",") this.#at++;
          else if (this.#tokens[this.#at]?.text !== ")") throw new Unevaluable(`"${t.text}(" is not closed`);
        }
        this.#at++;
        return call(t.text, args);
      }
      case "op":
        if (t.text === "(") {
          const v = this.#expr(0);
          if (this.#tokens[this.#at++]?.text !== ")") throw new Unevaluable(`a "(" is not closed`);
          return v;
        }
    }
    throw new Unevaluable(`"${t.text}" was not expected there`);
  }
}

/**
 * Evaluates a WGSL const-expression (or override-expression, when `resolve`
 * resolves overrides) made of scalars.
 *
 * @param text The expression, comments removed.
 * @param resolve Gives the value of an identifier.
 * @returns Its value and type.
 * @throws {Unevaluable} When it uses what the evaluator does not read, or WGSL would reject it.
 */
export function evaluate(text: string, resolve: Resolve): Scalar {
  return new Parser(text, resolve).run();
}

/**
 * Gives a declaration's value its written type, as WGSL does: an abstract
 * value converts, a concrete one must already have that type.
 *
 * @param v The initializer's value.
 * @param type The declared type.
 * @param what The declaration, for the message.
 * @returns The value, typed.
 * @throws {Unevaluable} When the types differ or the value does not fit.
 */
export function assign(v: Scalar, type: ScalarType, what: string): Scalar {
  if (v.type === type) return v;
  if ((v.type === "abstract-int" && type !== "bool") || (v.type === "abstract-float" && isFloat(type))) {
    return fit(v.value, type);
  }
  throw new Unevaluable(`${what} is declared ${type}, but its value is ${v.type}`);
}

/**
 * Converts a pipeline constant to an override's type, as WebGPU does (an
 * integer type truncates and must be in range; `bool` is "not zero").
 *
 * @param value The constant as given.
 * @param type The override's type.
 * @returns The value the pipeline gets.
 * @throws {Unevaluable} When it is out of the type's range.
 */
export function constantAs(value: number, type: ScalarType): Scalar {
  if (type === "bool") return { value: value !== 0 ? 1 : 0, type };
  return fit(isInteger(type) ? Math.trunc(value) : value, type);
}
