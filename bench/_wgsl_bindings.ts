/**
 * What the capture reads from a WGSL source: the buffer declarations (group,
 * binding, address space and access, name, store type with aliases
 * resolved), the entry point of a module of one, and the features it
 * enables. A small reader for the sources ONNX Runtime generates, not a WGSL
 * parser: `capture_conformance.ts` checks what it finds against the
 * client's own bind group layouts where they are explicit.
 *
 * @module
 */

import type { BindingType } from "../tests/conformance/_corpus.ts";

/** One buffer declaration. */
export interface WgslBuffer {
  readonly group: number;
  readonly binding: number;
  readonly name: string;
  readonly type: BindingType;
  /** The store type, aliases resolved. */
  readonly storeType: string;
}

/** The source without comments (line comments and nested block comments). */
export function stripWgslComments(src: string): string {
  let out = "";
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    const two = src.slice(i, i + 2);
    if (depth === 0 && two === "//") {
      while (i < src.length && src[i] !== "\n") i++;
      out += "\n";
    } else if (two === "/*") {
      depth++;
      i++;
    } else if (depth > 0 && two === "*/") {
      depth--;
      i++;
    } else if (depth === 0) out += src[i];
  }
  return out;
}

/** `alias` declarations, each resolved through the others. */
function aliases(src: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of src.matchAll(/\balias\s+(\w+)\s*=\s*([^;]+);/g)) map.set(m[1]!, m[2]!.trim());
  return map;
}

/** The type with every alias replaced by what it names. */
export function resolveAliases(type: string, map: Map<string, string>): string {
  let t = type;
  for (let round = 0; round < 16; round++) {
    const next = t.replace(/\b\w+\b/g, (w) => map.get(w) ?? w);
    if (next === t) break;
    t = next;
  }
  return t.replace(/\s+/g, "");
}

/** The buffers a source declares, in (group, binding) order. */
export function wgslBuffers(wgsl: string): WgslBuffer[] {
  const src = stripWgslComments(wgsl);
  const map = aliases(src);
  const out: WgslBuffer[] = [];
  const decl = /((?:@\w+\s*\([^)]*\)\s*)+)var\s*<\s*(\w+)\s*(?:,\s*(\w+)\s*)?>\s*(\w+)\s*:\s*([^;]+);/g;
  for (const m of src.matchAll(decl)) {
    const attrs = m[1]!;
    const group = /@group\s*\(\s*(\d+)\s*\)/.exec(attrs);
    const binding = /@binding\s*\(\s*(\d+)\s*\)/.exec(attrs);
    if (group === null || binding === null) continue;
    const space = m[2]!;
    const access = m[3] ?? "read";
    const type: BindingType = space === "uniform"
      ? "uniform"
      : access === "read_write"
      ? "storage"
      : "read-only-storage";
    out.push({
      group: Number(group[1]),
      binding: Number(binding[1]),
      name: m[4]!,
      type,
      storeType: resolveAliases(m[5]!, map),
    });
  }
  return out.sort((a, b) => a.group - b.group || a.binding - b.binding);
}

/** The compute entry points a source declares. */
export function computeEntryPoints(wgsl: string): string[] {
  const src = stripWgslComments(wgsl);
  return [...src.matchAll(/@compute\b[^{;]*?\bfn\s+(\w+)/g)].map((m) => m[1]!);
}

/** The WebGPU features a source's `enable` directives need. */
export function wgslFeatures(wgsl: string): string[] {
  const src = stripWgslComments(wgsl);
  const out: string[] = [];
  for (const m of src.matchAll(/\benable\s+([\w\s,]+);/g)) {
    for (const e of m[1]!.split(",").map((s) => s.trim())) {
      if (e === "f16") out.push("shader-f16");
      else if (e === "subgroups" || e === "subgroups_f16") out.push("subgroups");
      else if (e !== "") out.push(e);
    }
  }
  return [...new Set(out)];
}
