/**
 * Packing info words of mixed 32-bit types.
 *
 * @module
 */

const U32_MAX = 0xffff_ffff;

/**
 * Packs fields of mixed 32-bit types into info words, in order: the layout of
 * a WGSL struct of `u32`, `i32` and `f32` fields (and arrays of them), with
 * no view juggling. Values are checked, never wrapped: a `u32` must be an
 * integer in `[0, 2^32)`, an `i32` one in `[-2^31, 2^31)`; an `f32` is any
 * number, rounded to single precision.
 *
 * @example A struct of a count and a scale
 * ```ts
 * import { packInfo } from "@denogpu/runtime";
 *
 * // struct Info { n: u32, a: f32, shift: i32 }
 * const info = packInfo({ u32: 1000 }, { f32: 2.5 }, { i32: -3 });
 * console.log(info.length); // 3
 * console.log(new Float32Array(info.buffer)[1]); // 2.5
 * console.log(new Int32Array(info.buffer)[2]); // -3
 * ```
 *
 * @param fields The fields, each `{ u32 }`, `{ i32 }` or `{ f32 }` with a number or an array of numbers.
 * @returns The words, ready for `launch`.
 * @throws {TypeError} When a field is not exactly one of `{ u32 }`, `{ i32 }` or `{ f32 }` holding numbers.
 * @throws {RangeError} When a `u32` or `i32` value is not an integer in its range.
 */
export function packInfo(
  ...fields: readonly (
    | { readonly u32: number | readonly number[] }
    | { readonly i32: number | readonly number[] }
    | { readonly f32: number | readonly number[] }
  )[]
): Uint32Array<ArrayBuffer> {
  let n = 0;
  for (const [i, f] of fields.entries()) n += valuesOf(f, i).values.length;
  const words = new Uint32Array(n);
  const ints = new Int32Array(words.buffer);
  const floats = new Float32Array(words.buffer);
  let at = 0;
  for (const [i, f] of fields.entries()) {
    const { kind, values } = valuesOf(f, i);
    for (const v of values) {
      if (kind === "f32") {
        if (typeof v !== "number") badValue(i, kind, v);
        floats[at++] = v;
      } else if (kind === "u32") {
        if (!Number.isInteger(v) || v < 0 || v > U32_MAX) badValue(i, kind, v);
        words[at++] = v;
      } else {
        if (!Number.isInteger(v) || v < -0x8000_0000 || v > 0x7fff_ffff) badValue(i, kind, v);
        ints[at++] = v;
      }
    }
  }
  return words;
}

/** The kind and values of field `i`, or a `TypeError` naming it. */
function valuesOf(f: unknown, i: number): { kind: "u32" | "i32" | "f32"; values: readonly number[] } {
  const keys = f !== null && typeof f === "object" ? Object.keys(f) : [];
  const kind = keys[0];
  if (keys.length !== 1 || (kind !== "u32" && kind !== "i32" && kind !== "f32")) {
    throw new TypeError(
      `packInfo: field ${i} must be exactly one of { u32 }, { i32 } or { f32 }, got ${
        f !== null && typeof f === "object" ? `{ ${keys.join(", ")} }` : String(f)
      }`,
    );
  }
  const v = (f as Record<string, unknown>)[kind];
  const values = Array.isArray(v) ? v : [v];
  for (const x of values) if (typeof x !== "number") badValue(i, kind, x);
  return { kind, values: values as readonly number[] };
}

function badValue(i: number, kind: string, v: unknown): never {
  if (typeof v !== "number") throw new TypeError(`packInfo: field ${i} (${kind}) holds ${String(v)}, not a number`);
  const range = kind === "u32" ? "an integer in [0, 2^32)" : "an integer in [-2^31, 2^31)";
  throw new RangeError(`packInfo: field ${i} (${kind}) is ${v}, not ${range}`);
}
