/**
 * Errors across the worker boundary. Structured cloning keeps neither an
 * error's class beyond the built-in ones nor its own fields (`kind`,
 * `errors`, `kernel`...), so the worker encodes each error as plain data,
 * and the main thread revives it as an instance of the same class (the
 * runtime's error classes and JavaScript's built-in ones), with the same
 * message, fields, cause and nested errors, without calling its constructor.
 *
 * @module
 */

import * as runtimeErrors from "../../errors.ts";

/** An error as plain, cloneable data. */
export interface EncodedError {
  /** Marks the object as an encoded error. */
  readonly $error: true;
  /** The nearest class of the error's prototype chain that the other side knows. */
  readonly ctor: string;
  /** `error.message`. */
  readonly message: string;
  /** `error.stack`, when a string. */
  readonly stack?: string;
  /** The encoded `cause`, when the error has one. */
  readonly cause?: unknown;
  /** The error's own enumerable fields, encoded. */
  readonly fields: Record<string, unknown>;
}

type ErrorClass = abstract new (...args: never[]) => Error;

const BUILT_IN: readonly ErrorClass[] = [
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
];

/** Every class an encoded error may name: the runtime's error classes, then the built-in ones. */
const CLASSES: ReadonlyMap<string, ErrorClass> = (() => {
  const map = new Map<string, ErrorClass>();
  for (const value of Object.values(runtimeErrors)) {
    if (typeof value === "function" && value.prototype instanceof Error) map.set(value.name, value as ErrorClass);
  }
  for (const c of BUILT_IN) map.set(c.name, c);
  return map;
})();

/** The nearest known class of `e`'s prototype chain (by constructor name, checked to be that class). */
function knownClass(e: Error): string {
  for (let p = Object.getPrototypeOf(e); p !== null; p = Object.getPrototypeOf(p)) {
    const name = (p.constructor as { name?: unknown } | undefined)?.name;
    if (typeof name === "string" && CLASSES.get(name)?.prototype === p) return name;
  }
  return "Error";
}

/**
 * Encodes a value for the other thread: errors (also nested in arrays,
 * plain objects and fields) become `EncodedError`s; functions and promises
 * are dropped; other values are left to structured cloning.
 *
 * @param value The value.
 * @param depth Nesting depth reached (deeper values are dropped).
 * @returns Cloneable data.
 */
export function encodeValue(value: unknown, depth = 0): unknown {
  if (depth > 8) return undefined;
  if (value instanceof Error) return encodeError(value, depth);
  if (typeof value === "function" || value instanceof Promise) return undefined;
  if (Array.isArray(value)) return value.map((v) => encodeValue(v, depth + 1));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = encodeValue(v, depth + 1);
    return out;
  }
  return value;
}

/**
 * Encodes an error (see `encodeValue`).
 *
 * @param e The error, or anything thrown.
 * @param depth Nesting depth reached.
 * @returns The encoded error.
 */
export function encodeError(e: unknown, depth = 0): EncodedError {
  if (!(e instanceof Error)) {
    return { $error: true, ctor: "Error", message: String(e), fields: {} };
  }
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) fields[k] = encodeValue(v, depth + 1);
  return {
    $error: true,
    ctor: knownClass(e),
    message: e.message,
    ...(typeof e.stack === "string" ? { stack: e.stack } : {}),
    ...("cause" in e ? { cause: encodeValue(e.cause, depth + 1) } : {}),
    fields,
  };
}

/** True when `value` is an `EncodedError`. */
export function isEncodedError(value: unknown): value is EncodedError {
  return value !== null && typeof value === "object" && (value as { $error?: unknown }).$error === true;
}

/**
 * Revives what `encodeValue` made: encoded errors become instances of their
 * class again.
 *
 * @param value Decoded data.
 * @returns The value with its errors revived.
 */
export function reviveValue(value: unknown): unknown {
  if (isEncodedError(value)) return reviveError(value);
  if (Array.isArray(value)) return value.map(reviveValue);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = reviveValue(v);
    return out;
  }
  return value;
}

/**
 * Revives an encoded error as an instance of its class: same message,
 * stack, cause and fields; the constructor is not called.
 *
 * @param encoded The encoded error.
 * @returns The error.
 */
export function reviveError(encoded: EncodedError): Error {
  const cls = CLASSES.get(encoded.ctor) ?? Error;
  const e = Object.create(cls.prototype) as Error;
  const hidden = { writable: true, configurable: true, enumerable: false };
  Object.defineProperty(e, "message", { ...hidden, value: encoded.message });
  if (encoded.stack !== undefined) Object.defineProperty(e, "stack", { ...hidden, value: encoded.stack });
  if ("cause" in encoded) Object.defineProperty(e, "cause", { ...hidden, value: reviveValue(encoded.cause) });
  for (const [k, v] of Object.entries(encoded.fields)) {
    Object.defineProperty(e, k, { writable: true, configurable: true, enumerable: true, value: reviveValue(v) });
  }
  return e;
}
