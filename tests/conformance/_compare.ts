/**
 * Compares the bytes a replayed dispatch left with the captured ones: exact,
 * or, for the f32 elements of a writable binding of a dispatch that records
 * a tolerance, within it.
 *
 * @module
 */

import type { CorpusBinding, ElementKind, Tolerance } from "./_corpus.ts";

/** How a dispatch's results compare. */
export type Verdict =
  | { readonly kind: "exact" }
  | { readonly kind: "tolerance"; readonly worstUlps: number }
  | { readonly kind: "differs"; readonly what: string };

/** The distance in units in the last place between two f32 values (NaN equal to NaN). */
export function ulpDistance(a: number, b: number): number {
  if (Number.isNaN(a) && Number.isNaN(b)) return 0;
  if (Number.isNaN(a) || Number.isNaN(b)) return Infinity;
  const bits = new Int32Array(new Float32Array([a, b]).buffer);
  // Map sign-magnitude to a monotonic integer line.
  const ord = (i: number) => (i < 0 ? -0x80000000 - i : i);
  return Math.abs(ord(bits[0]!) - ord(bits[1]!));
}

function show(bytes: Uint8Array, at: number, element: ElementKind): string {
  const word = Math.floor(at / 4) * 4;
  if (word + 4 > bytes.length) return `byte ${bytes[at]}`;
  const v = new DataView(bytes.buffer, bytes.byteOffset + word, 4);
  if (element === "f32") return String(v.getFloat32(0, true));
  if (element === "i32") return String(v.getInt32(0, true));
  return `0x${v.getUint32(0, true).toString(16).padStart(8, "0")}`;
}

/** Compares one binding's bytes; `tolerance` applies only to f32 bindings the dispatch may write. */
export function compareBinding(
  binding: CorpusBinding,
  actual: Uint8Array,
  expected: Uint8Array,
  tolerance: Tolerance | undefined,
): Verdict {
  if (actual.length !== expected.length) {
    return { kind: "differs", what: `${binding.name}: ${actual.length} bytes read, ${expected.length} captured` };
  }
  let first = -1;
  let count = 0;
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] !== expected[i]) {
      if (first < 0) first = i;
      count++;
    }
  }
  if (first < 0) return { kind: "exact" };
  const where = `${binding.name}: ${count} of ${actual.length} bytes differ, the first at byte ${first} ` +
    `(${show(actual, first, binding.element)} read, ${show(expected, first, binding.element)} captured)`;
  if (tolerance === undefined || binding.element !== "f32" || binding.type !== "storage" || actual.length % 4 !== 0) {
    return { kind: "differs", what: where };
  }
  const a = new Float32Array(actual.slice().buffer);
  const e = new Float32Array(expected.slice().buffer);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!, y = e[i]!;
    const ulps = ulpDistance(x, y);
    if (ulps === 0) continue;
    if (ulps > tolerance.ulps && !(Math.abs(x - y) <= tolerance.abs)) {
      return {
        kind: "differs",
        what: `${binding.name}: element ${i} is ${x}, captured ${y} (${ulps} ULP, more than the ${tolerance.ulps} ` +
          `allowed and further than ${tolerance.abs})`,
      };
    }
    if (ulps <= tolerance.ulps) worst = Math.max(worst, ulps);
  }
  return { kind: "tolerance", worstUlps: worst };
}

/** Compares every binding of a dispatch: the worst verdict among them. */
export function compareDispatch(
  bindings: readonly CorpusBinding[],
  actual: readonly Uint8Array[],
  expected: readonly Uint8Array[],
  tolerance: Tolerance | undefined,
): Verdict {
  const differs: string[] = [];
  let worst = -1;
  bindings.forEach((b, i) => {
    const v = compareBinding(b, actual[i]!, expected[i]!, tolerance);
    if (v.kind === "differs") differs.push(v.what);
    else if (v.kind === "tolerance") worst = Math.max(worst, v.worstUlps);
  });
  if (differs.length > 0) return { kind: "differs", what: differs.join("; ") };
  return worst >= 0 ? { kind: "tolerance", worstUlps: worst } : { kind: "exact" };
}

/** A dispatch's verdict, named. */
export interface Outcome {
  readonly id: string;
  readonly program: string;
  readonly verdict: Verdict;
}

/** What a group of outcomes says against a list of known failures. */
export interface Judgement {
  /** Dispatches that differ and are not listed. */
  readonly unexpected: string[];
  /** Dispatches listed as failing that now pass. */
  readonly nowPassing: string[];
  readonly exact: number;
  readonly tolerance: number;
  /** Listed dispatches that still differ. */
  readonly known: number;
}

/** Sorts outcomes into exact, within tolerance, known failures, and the two kinds of surprise. */
export function judge(outcomes: readonly Outcome[], known: Readonly<Record<string, string>>): Judgement {
  const j = { unexpected: [] as string[], nowPassing: [] as string[], exact: 0, tolerance: 0, known: 0 };
  for (const { id, program, verdict } of outcomes) {
    const listed = Object.hasOwn(known, id);
    if (verdict.kind === "differs") {
      if (listed) j.known++;
      else j.unexpected.push(`${id} (${program}): ${verdict.what}`);
    } else if (listed) j.nowPassing.push(`${id} (${program})`);
    else j[verdict.kind]++;
  }
  return j;
}
