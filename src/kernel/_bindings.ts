/**
 * The bindings of an entry point, and the source the runtime compiles for
 * them.
 *
 * Rule: every storage or uniform buffer the entry point uses takes one launch
 * argument, in `(group, binding)` order, whatever its address space and
 * access mode; when a launch passes info words, the last of them takes the
 * info words. "Uses": in a module of one entry point, every buffer declared;
 * in a module of several, the buffers its body and the functions it calls
 * mention.
 *
 * The runtime binds all of them in one bind group, with an explicit layout:
 * read-write storage buffers, and the info words with a dynamic offset, as a
 * uniform buffer when the last binding is declared `var<uniform>` (it then
 * counts toward `maxUniformBuffersPerShaderStage`, not the storage limit),
 * else as read-only storage. The compiled source is the user's with each of
 * these declarations rewritten in place to match: `@group(0) @binding(i)` in
 * argument order, `var<storage, read_write>` (a pooled buffer shares its
 * `GPUBuffer` with others, and WebGPU forbids binding one buffer both
 * writable and read-only in one dispatch), and `var<uniform>` or
 * `var<storage, read>` for the info binding. WGSL lays out a type the same
 * way in every address space (the uniform rules only add constraints), but
 * Deno's GL backend ignores `@align` and `@size` and lays storage out by
 * std430: so each struct the bindings reach whose layout depends on those
 * attributes is rewritten with explicit padding members (`_struct_layout.ts`).
 * Every other resource declaration moves to a binding of its own past these,
 * so no entry point of the module sees two at one place. Rewrites keep the
 * source's line breaks, so compiler messages point at the user's lines and
 * names.
 *
 * Refused with a `KernelLayoutError`, at definition: a texture, sampler or
 * storage texture the entry point uses; a `var` of another address space with
 * `@group` or `@binding`; a buffer missing one of them; two buffers it uses at
 * the same `(group, binding)`; a `@group` or `@binding` that cannot be
 * evaluated.
 *
 * @module
 */

import type { BindingKind } from "../contract/kernel.ts";
import { KernelLayoutError } from "../errors/kernel_errors.ts";
import type { ModuleScope } from "./_module_scope.ts";
import { TypeLayouts } from "./_struct_layout.ts";
import {
  type Attribute,
  type Declaration,
  declarationText,
  entryPointCount,
  reachableNames,
  VAR_DECL,
} from "./_wgsl_source.ts";

/** The bindings of an entry point, and what to compile. */
export interface BindingPlan {
  /** Names of the bound variables, in argument order. */
  readonly names: readonly string[];
  /** How each is declared, in argument order. */
  readonly kinds: readonly BindingKind[];
  /** Fewest bytes each takes by the WGSL layout rules (0 when unknown), in argument order. */
  readonly sizes: readonly number[];
  /** The source to compile for launches without info words. */
  readonly wgsl: string;
  /** The source to compile for launches with info words (the last binding read-only). */
  readonly wgslWithInfo: string;
}

/** A module-scope `var` that is, or claims to be, a resource. */
interface Resource {
  readonly decl: Declaration;
  readonly name: string;
  readonly text: string;
  readonly group: Attribute | undefined;
  readonly binding: Attribute | undefined;
  /** Offsets of `var` and its template, `var<...>`, in the source. */
  readonly varStart: number;
  readonly varEnd: number;
  /** The address space (`""` when the declaration has no template), and the access mode written. */
  readonly space: string;
  readonly access: string;
  readonly type: string;
}

/** A buffer the entry point binds. */
interface Bound {
  readonly res: Resource;
  readonly group: number;
  readonly binding: number;
  readonly reached: boolean;
}

const VAR_HEAD = /^var\s*(?:<[^>]*>)?/;

/** The module-scope vars that are resources: with `@group` or `@binding`, in storage or uniform, or of a handle type. */
function resources(src: string, decls: readonly Declaration[]): Resource[] {
  const out: Resource[] = [];
  for (const d of decls) {
    const v = VAR_DECL.exec(d.rest);
    if (v === null) continue;
    const group = d.attributes.find((a) => a.name === "group");
    const binding = d.attributes.find((a) => a.name === "binding");
    const [space = "", access = ""] = (v[1] ?? "").split(",").map((s) => s.trim());
    if (group === undefined && binding === undefined && space !== "storage" && space !== "uniform") {
      continue; // var<private>, var<workgroup>, or a WGSL error the compiler reports
    }
    out.push({
      decl: d,
      name: v[2]!,
      text: declarationText(src, d),
      group,
      binding,
      varStart: d.restStart,
      varEnd: d.restStart + VAR_HEAD.exec(d.rest)![0].length,
      space,
      access,
      type: (v[3] ?? "").trim(),
    });
  }
  return out;
}

/** Refuses a resource the runtime cannot bind as a buffer; returns when it can. */
function checkBindable(kernel: string, r: Resource): void {
  const refuse = (reason: string, fix: string) =>
    new KernelLayoutError(kernel, { kind: "unbindable", declaration: r.text, reason, fix });
  const bufferFix = "Declare it as a buffer (var<storage, read_write> x: array<f32>, or a struct) and pass a handle.";
  if (r.space === "") {
    const t = r.type.replace(/\s+/g, "");
    if (t.startsWith("texture_storage_")) {
      throw refuse("the runtime binds buffers only, not storage textures", bufferFix);
    }
    if (t.startsWith("texture_")) {
      throw refuse("the runtime binds buffers only, not textures", `${bufferFix} Index the texels yourself.`);
    }
    if (t === "sampler" || t === "sampler_comparison") {
      throw refuse("the runtime binds buffers only, not samplers", "Remove it, and filter in the shader.");
    }
    throw refuse(
      `the runtime binds storage and uniform buffers only, and this is a ${r.type || "declaration without a type"}`,
      bufferFix,
    );
  }
  if (r.space !== "storage" && r.space !== "uniform") {
    throw refuse(
      `only var<storage> and var<uniform> take @group and @binding, and this is var<${r.space}>`,
      "Remove the @group and @binding attributes, or declare a storage buffer.",
    );
  }
  if (r.space === "uniform" && r.access !== "") {
    throw refuse("var<uniform> takes no access mode", "Write var<uniform>.");
  }
  if (r.space === "storage" && r.access !== "" && r.access !== "read" && r.access !== "read_write") {
    throw refuse(
      `a storage buffer's access mode is read or read_write, not ${r.access}`,
      "Write var<storage, read> or var<storage, read_write>.",
    );
  }
  if (r.group === undefined || r.binding === undefined) {
    throw refuse(
      `a buffer needs both @group and @binding, and this one has no @${r.group === undefined ? "group" : "binding"}`,
      "Add it, e.g. @group(0) @binding(0).",
    );
  }
}

/** The source span text replaced by `text`, keeping the span's line breaks. */
function keepLines(old: string, text: string): string {
  return text + old.replace(/[^\n\r\v\f\u0085\u2028\u2029]/g, "");
}

/**
 * Reads the bindings of an entry point and builds the sources to compile.
 *
 * @param kernel Name of the kernel, for errors.
 * @param wgsl The user's source.
 * @param src The same source, comments blanked.
 * @param decls Its module-scope declarations.
 * @param scope Its module scope, to evaluate `@group` and `@binding`.
 * @param entryPoint The entry point.
 * @returns The plan.
 * @throws {KernelLayoutError} When a binding cannot be evaluated or bound (see the module doc).
 */
export function planBindings(
  kernel: string,
  wgsl: string,
  src: string,
  decls: readonly Declaration[],
  scope: ModuleScope,
  entryPoint: string,
): BindingPlan {
  const reach = reachableNames(src, entryPoint);
  const several = entryPointCount(src) >= 2;
  const bound: Bound[] = [];
  const others: Resource[] = [];
  for (const r of resources(src, decls)) {
    const reached = reach === null || reach.has(r.name);
    const buffer = r.space === "storage" || r.space === "uniform";
    if (!(reached || (buffer && !several))) {
      others.push(r);
      continue;
    }
    checkBindable(kernel, r);
    bound.push({
      res: r,
      group: scope.attribute(r.group!, r.text),
      binding: scope.attribute(r.binding!, r.text),
      reached,
    });
  }
  bound.sort((a, b) => a.group - b.group || a.binding - b.binding);
  const kept: Bound[] = [];
  for (const b of bound) {
    const prev = kept.at(-1);
    if (prev === undefined || prev.group !== b.group || prev.binding !== b.binding) {
      kept.push(b);
    } else if (prev.reached !== b.reached) {
      // One of the two is declared but never used: the used one takes the place.
      const unused = prev.reached ? b : prev;
      others.push(unused.res);
      if (unused === prev) kept[kept.length - 1] = b;
    } else {
      throw new KernelLayoutError(kernel, {
        kind: "duplicate",
        declaration: b.res.text,
        reason: `@group(${b.group}) @binding(${b.binding}) is also declared by var "${prev.res.name}", ` +
          `and each buffer the entry point uses needs a (group, binding) of its own`,
        fix: "Give one of them another @binding.",
      });
    }
  }
  const n = kept.length;
  const kinds = kept.map((b): BindingKind =>
    b.res.space === "uniform" ? "uniform" : b.res.access === "read" ? "read-only-storage" : "storage"
  );
  const types = new TypeLayouts(src, decls, scope);
  const all = kept.map((b) => b.res.type);
  const asStorage = types.explicitStructs(src, all);
  // With info words, a last binding declared var<uniform> binds as a uniform: its structs keep their attributes.
  const asInfo = n > 0 && kinds[n - 1] === "uniform"
    ? types.explicitStructs(src, all.slice(0, -1), all.slice(-1))
    : asStorage;
  const edits = (info: boolean) => {
    const list: [number, number, string][] = [...(info ? asInfo : asStorage)];
    kept.forEach((b, i) => {
      const r = b.res;
      const last = info && i === n - 1;
      list.push([r.group!.start, r.group!.end, "@group(0)"]);
      list.push([r.binding!.start, r.binding!.end, `@binding(${i})`]);
      const space = !last ? "var<storage, read_write>" : kinds[i] === "uniform" ? "var<uniform>" : "var<storage, read>";
      list.push([r.varStart, r.varEnd, space]);
    });
    // Resources this entry point does not bind: out of the way, each at a binding of its own.
    let next = n;
    for (const r of others) {
      if (r.group === undefined || r.binding === undefined) continue;
      list.push([r.group.start, r.group.end, "@group(0)"]);
      list.push([r.binding.start, r.binding.end, `@binding(${next++})`]);
    }
    return list;
  };
  return {
    names: kept.map((b) => b.res.name),
    kinds,
    sizes: kept.map((b) => types.of(b.res.type)?.size ?? 0),
    wgsl: rewrite(wgsl, edits(false)),
    wgslWithInfo: rewrite(wgsl, edits(true)),
  };
}

/** Applies non-overlapping span replacements, keeping each span's line breaks. */
function rewrite(wgsl: string, edits: [number, number, string][]): string {
  edits.sort((a, b) => a[0] - b[0]);
  let out = "";
  let from = 0;
  for (const [start, end, text] of edits) {
    out += wgsl.slice(from, start) + keepLines(wgsl.slice(start, end), text);
    from = end;
  }
  return out + wgsl.slice(from);
}
