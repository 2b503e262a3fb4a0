/**
 * Memory layout of WGSL types, by the rules of the WGSL specification
 * (§ "Memory Layout"): the alignment and size of scalars, vectors, matrices,
 * atomics, fixed and runtime-sized arrays and structures, with `@align` and
 * `@size` on structure members, through `alias` declarations.
 *
 * Two uses. The fewest bytes a binding takes (a runtime-sized array counts
 * one element, as WebGPU's minimum binding size does), so a launch whose
 * buffer or info words are too short is refused at the call instead of
 * failing its whole batch at submit. And layout-exact sources: Deno 2.9.6's
 * GL backend (naga's GLSL output) ignores `@align` and `@size`, and lays out
 * storage buffers by std430, so the same struct sat at other offsets under
 * `var<storage>` than WGSL says (tfjs-webgpu's `@align(16) xShape : vec5`
 * uniforms at byte 4 instead of 16). {@linkcode TypeLayouts.explicitStructs}
 * rewrites each struct whose layout depends on those attributes with
 * explicit `u32` padding members instead, which every backend lays out the
 * same way, so a buffer reads at the offsets WGSL gives whatever the
 * compiler does with attributes.
 *
 * @module
 */

import type { ModuleScope } from "./_module_scope.ts";
import { attributesOf, type Declaration, IDENT, splitTopLevel } from "./_wgsl_source.ts";

/** Alignment and size of a type, in bytes. */
export interface Layout {
  /** Alignment (a power of two). */
  readonly align: number;
  /** Size; for a runtime-sized array (or a struct ending in one), the size with one element. */
  readonly size: number;
}

/** One member of a struct declaration. */
interface Member {
  readonly name: string;
  readonly type: string;
  /** The `@align` and `@size` values, or null when absent (undefined: present but not evaluable). */
  readonly align: number | null | undefined;
  readonly size: number | null | undefined;
}

/** A struct declaration, with where its body sits in the source. */
interface StructDecl {
  readonly name: string;
  readonly members: readonly Member[];
  /** Offsets of the body, between the braces. */
  readonly bodyStart: number;
  readonly bodyEnd: number;
}

const STRUCT_DECL = new RegExp(String.raw`^struct\s+(${IDENT})\s*\{([\s\S]*)\}\s*$`, "u");
const ALIAS_DECL = new RegExp(String.raw`^alias\s+(${IDENT})\s*=([\s\S]*)$`, "u");
const MEMBER = new RegExp(String.raw`^(${IDENT})\s*:([\s\S]+)$`, "u");
const SCALARS: Readonly<Record<string, number>> = { f32: 4, i32: 4, u32: 4, f16: 2 };
const SHORT: Readonly<Record<string, string>> = { f: "f32", i: "i32", u: "u32", h: "f16" };

const roundUp = (align: number, n: number) => Math.ceil(n / align) * align;

/** The layouts of the types a module declares and uses. */
export class TypeLayouts {
  #scope: ModuleScope;
  #structs = new Map<string, StructDecl>();
  #aliases = new Map<string, string>();
  #layouts = new Map<string, Layout | null>();
  /** Per struct: its members' offsets by the WGSL rules (filled with the struct's layout). */
  #offsets = new Map<string, number[]>();

  /**
   * Reads the module's struct and alias declarations.
   *
   * @param src The source, comments blanked.
   * @param decls Its module-scope declarations.
   * @param scope Its module scope, to evaluate `@align`, `@size` and array lengths.
   */
  constructor(src: string, decls: readonly Declaration[], scope: ModuleScope) {
    this.#scope = scope;
    for (const d of decls) {
      const s = STRUCT_DECL.exec(d.rest);
      if (s !== null) {
        const bodyStart = d.restStart + d.rest.indexOf("{") + 1;
        const bodyEnd = d.restStart + d.rest.lastIndexOf("}");
        this.#structs.set(s[1]!, { name: s[1]!, members: this.#members(src, bodyStart, bodyEnd), bodyStart, bodyEnd });
        continue;
      }
      const a = ALIAS_DECL.exec(d.rest);
      if (a !== null) this.#aliases.set(a[1]!, a[2]!.trim());
    }
  }

  #members(src: string, start: number, end: number): Member[] {
    const out: Member[] = [];
    let from = start;
    for (const part of splitTopLevel(src.slice(start, end))) {
      const at = src.indexOf(part, from);
      from = at + part.length;
      if (part === "") continue;
      const { attributes, rest } = attributesOf(part, at);
      const m = MEMBER.exec(rest);
      if (m === null) continue;
      const value = (name: string) => {
        const attr = attributes.find((x) => x.name === name);
        if (attr === undefined) return null;
        return attr.args.length === 1 ? this.#scope.count(attr.args[0]!) ?? undefined : undefined;
      };
      out.push({ name: m[1]!, type: m[2]!.trim(), align: value("align"), size: value("size") });
    }
    return out;
  }

  /**
   * The layout of a type by the WGSL rules.
   *
   * @param type The type as written.
   * @returns Its alignment and size, or null when it cannot be laid out here
   * (an unknown name, a length that is not a constant, `bool`, a pointer...).
   */
  of(type: string): Layout | null {
    const t = type.replace(/\s+/g, "");
    if (this.#layouts.has(t)) return this.#layouts.get(t)!;
    this.#layouts.set(t, null); // a type that contains itself is not host-shareable
    const layout = this.#compute(t);
    this.#layouts.set(t, layout);
    return layout;
  }

  #compute(t: string): Layout | null {
    const scalar = SCALARS[t];
    if (scalar !== undefined) return { align: scalar, size: scalar };
    if (/^atomic<[iu]32>$/.test(t)) return { align: 4, size: 4 };
    const vec = /^vec([234])(?:<(\w+)>|([fiuh]))$/.exec(t);
    if (vec) {
      const e = SCALARS[vec[2] ?? SHORT[vec[3]!]!];
      if (e === undefined) return null;
      const n = Number(vec[1]);
      return { align: (n === 2 ? 2 : 4) * e, size: n * e };
    }
    const mat = /^mat([234])x([234])(?:<(\w+)>|([fh]))$/.exec(t);
    if (mat) {
      const e = SCALARS[mat[3] ?? SHORT[mat[4]!]!];
      if (e === undefined) return null;
      const rows = Number(mat[2]);
      const colAlign = (rows === 2 ? 2 : 4) * e;
      return { align: colAlign, size: Number(mat[1]) * roundUp(colAlign, rows * e) };
    }
    const arr = /^array<([\s\S]*)>$/.exec(t);
    if (arr) {
      const args = splitTopLevel(arr[1]!);
      const elem = args[0] === undefined ? null : this.of(args[0]);
      if (elem === null || args.length > 2) return null;
      const stride = roundUp(elem.align, elem.size);
      if (args.length === 1) return { align: elem.align, size: stride };
      const n = this.#scope.count(args[1]!);
      return n === null || n < 1 ? null : { align: elem.align, size: n * stride };
    }
    const alias = this.#aliases.get(t);
    if (alias !== undefined) return this.of(alias);
    const s = this.#structs.get(t);
    return s === undefined ? null : this.#struct(s);
  }

  #struct(s: StructDecl): Layout | null {
    let align = 1;
    let end = 0;
    const offsets: number[] = [];
    for (const m of s.members) {
      const inner = this.of(m.type);
      if (inner === null || m.align === undefined || m.size === undefined) return null;
      const a = m.align ?? inner.align;
      const offset = roundUp(a, end);
      offsets.push(offset);
      end = offset + (m.size ?? inner.size);
      align = Math.max(align, a);
    }
    if (offsets.length === 0) return null;
    this.#offsets.set(s.name, offsets);
    return { align, size: roundUp(align, end) };
  }

  /**
   * Edits that rewrite, in place, every struct that `roots` (store types of
   * bound buffers) reach and whose layout depends on `@align` or `@size`
   * (its own members' or those of a struct it holds): the attributes are
   * dropped and `u32` padding members put each member at its WGSL offset
   * and the struct at its WGSL size. A struct the source also constructs
   * (`S(...)`) is left as written: padding would change its constructor. So
   * is a struct that `uniforms` reach where padding would follow a
   * struct-typed member: in the uniform address space the member after one
   * must start `roundUp(16, size)` bytes after it (such a struct keeps its
   * attributes, laid out as the platform lays out uniforms).
   *
   * @param src The source, comments blanked.
   * @param roots The store types of the buffers bound as storage.
   * @param uniforms The store types of the buffers bound as uniforms.
   * @returns Span replacements `[start, end, text]` on the source.
   */
  explicitStructs(src: string, roots: readonly string[], uniforms: readonly string[] = []): [number, number, string][] {
    const kept = new Set<string>();
    const reached = new Set<string>();
    const visit = (type: string, into: Set<string> = reached) => {
      for (const [name] of type.matchAll(new RegExp(IDENT, "gu"))) {
        if (into.has(name)) continue;
        const alias = this.#aliases.get(name);
        if (alias !== undefined) {
          into.add(name);
          visit(alias, into);
        }
        const s = this.#structs.get(name);
        if (s === undefined) continue;
        into.add(name);
        for (const m of s.members) visit(m.type, into);
      }
    };
    for (const r of uniforms) visit(r, kept);
    for (const r of roots) visit(r);
    // The alignment each struct keeps once rewritten (its members' natural alignments, padding included).
    const natural = new Map<string, number>();
    const naturalOf = (type: string): Layout | null => {
      const t = type.replace(/\s+/g, "");
      const l = this.of(t);
      if (l === null) return null;
      const s = this.#structs.get(this.#resolve(t));
      if (s !== undefined) return { align: natural.get(s.name) ?? l.align, size: l.size };
      const arr = /^array<([\s\S]*)>$/.exec(t);
      if (arr) {
        const elem = naturalOf(splitTopLevel(arr[1]!)[0]!);
        return elem === null ? null : { align: elem.align, size: l.size };
      }
      return l;
    };
    const edits: [number, number, string][] = [];
    // Structs in dependency order: a struct's members are rewritten before it.
    const order: StructDecl[] = [];
    const placed = new Set<string>();
    const place = (name: string) => {
      const s = this.#structs.get(name);
      if (s === undefined || placed.has(name)) return;
      placed.add(name);
      for (const m of s.members) {
        for (const [n] of m.type.matchAll(new RegExp(IDENT, "gu"))) place(this.#resolve(n));
      }
      order.push(s);
    };
    for (const name of [...reached, ...kept]) place(this.#resolve(name));
    for (const s of order) {
      const layout = this.of(s.name);
      const offsets = this.#offsets.get(s.name);
      if (layout === null || offsets === undefined || constructs(src, s.name)) continue;
      const uniform = kept.has(s.name);
      /** Where padding may start in the uniform address space (after a struct-typed member: 16-rounded past it). */
      let free = 0;
      const parts: string[] = [];
      let end = 0;
      let align = 1;
      let pad = 0;
      let changed = false;
      let ok = true;
      const padTo = (target: number) => {
        if (target < end || (target - end) % 4 !== 0 || (uniform && end < free)) return void (ok = false);
        for (; end < target; end += 4) parts.push(`denogpu_pad${pad++}: u32`);
        align = Math.max(align, 4);
        changed = true;
      };
      for (const [i, m] of s.members.entries()) {
        const n = naturalOf(m.type);
        if (n === null) {
          ok = false;
          break;
        }
        if (m.align !== null || m.size !== null) changed = true;
        if (roundUp(n.align, end) !== offsets[i]) padTo(offsets[i]!);
        if (!ok || roundUp(n.align, end) !== offsets[i]) {
          ok = false;
          break;
        }
        parts.push(`${m.name}: ${m.type}`);
        end = offsets[i]! + n.size;
        free = this.#structs.has(this.#resolve(m.type.replace(/\s+/g, ""))) ? offsets[i]! + roundUp(16, n.size) : end;
        align = Math.max(align, n.align);
      }
      if (!ok) continue;
      // The struct's size: trailing padding up to the WGSL size (its natural alignment divides it).
      if (roundUp(align, end) !== layout.size) {
        padTo(layout.size);
        if (!ok || roundUp(align, end) !== layout.size) continue;
      }
      natural.set(s.name, align);
      if (changed) edits.push([s.bodyStart, s.bodyEnd, ` ${parts.join(", ")} `]);
    }
    return edits;
  }

  /** A name through its aliases. */
  #resolve(name: string): string {
    for (let i = 0; i < 16; i++) {
      const next = this.#aliases.get(name);
      if (next === undefined || !/^[\p{XID_Start}_]\p{XID_Continue}*$/u.test(next)) return name;
      name = next;
    }
    return name;
  }
}

/** True when the source constructs struct `name` (`name(` outside its declaration). */
function constructs(src: string, name: string): boolean {
  return new RegExp(String.raw`(?<![\p{XID_Continue}.])${name}\s*\(`, "u").test(src);
}
