/**
 * WGSL source scanning for the layout reader: comments blanked as WGSL reads
 * them (every offset stays that of the user's source, so declarations can be
 * rewritten in place), module-scope declarations split off with their
 * attributes (each attribute's expressions split at top-level commas) and
 * source spans, and the names an entry point reaches.
 *
 * @module
 */

/** An attribute: its name without `@`, and its expressions split at top-level commas. */
export interface Attribute {
  /** The name, without `@`. */
  readonly name: string;
  /** Its expressions (none when it has no parentheses). */
  readonly args: readonly string[];
  /** Offset of its `@` in the source. */
  readonly start: number;
  /** Offset just past it (past its closing parenthesis, when it has one). */
  readonly end: number;
}

/** A module-scope declaration: its attributes, and the text after them. */
export interface Declaration {
  /** The attributes before the declaration, in order. */
  readonly attributes: readonly Attribute[];
  /** The declaration itself, from its keyword on, trimmed. */
  readonly rest: string;
  /** Offset of `rest` in the source. */
  readonly restStart: number;
}

/** A WGSL identifier, as a regular expression source (for the `u` flag). */
export const IDENT: string = String.raw`[\p{XID_Start}_]\p{XID_Continue}*`;
/**
 * A module-scope `var` declaration (after its attributes): its template (`storage, read`), name and type.
 */
export const VAR_DECL: RegExp = new RegExp(
  String.raw`^var\s*(?:<([^>]*)>)?\s*(${IDENT})\s*(?::([^=]*))?(?:=[\s\S]*)?$`,
  "u",
);
const ATTRIBUTE = new RegExp(String.raw`\s*@\s*(${IDENT})\s*`, "uy");
const IDENT_BEFORE = new RegExp(String.raw`(?<!\p{XID_Continue})${IDENT}\s*$`, "u");

/** Blanks a comment: every UTF-16 unit but line breaks becomes a space, so offsets and line numbers stay. */
function blank(comment: string): string {
  return comment.replace(/[^\n\r\v\f\u0085\u2028\u2029]/g, " ");
}

/**
 * Blanks every comment, as WGSL reads them: block comments nest, and a line
 * comment (which may contain `/*`) ends at the line break. The result has the
 * source's length and line breaks, so an offset in it is an offset in the
 * source.
 *
 * @param src WGSL source.
 * @returns The source with every comment replaced by spaces.
 */
export function stripComments(src: string): string {
  let out = "";
  let from = 0; // start of the code not yet copied
  let i = 0;
  while (i < src.length - 1) {
    const two = src.slice(i, i + 2);
    if (two === "//") {
      const end = src.indexOf("\n", i);
      const stop = end < 0 ? src.length : end;
      out += src.slice(from, i) + blank(src.slice(i, stop));
      i = from = stop;
    } else if (two === "/*") {
      const open = i;
      let depth = 1;
      i += 2;
      while (i < src.length && depth > 0) {
        const t = src.slice(i, i + 2);
        if (t === "/*" || t === "*/") {
          depth += t === "/*" ? 1 : -1;
          i += 2;
        } else {
          i++;
        }
      }
      i = Math.min(i, src.length);
      out += src.slice(from, open) + blank(src.slice(open, i));
      from = i;
    } else {
      i++;
    }
  }
  return out + src.slice(from);
}

/**
 * Splits a template or argument list at its top-level commas (not those
 * inside parentheses, brackets or a nested template such as `vec2<u32>`),
 * dropping the empty entry a trailing comma leaves.
 */
export function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  const open: string[] = [];
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "(" || c === "[") open.push(c);
    else if (c === ")" || c === "]") { while (open.length > 0 && open.pop() === "<"); }
    else if (c === "<" && s[i + 1] !== "<" && s[i + 1] !== "=" && s[i - 1] !== "<") {
      if (IDENT_BEFORE.test(s.slice(0, i))) open.push("<"); // `vec2<`, not `a << b` or `1 < b`
    } else if (c === ">" && open.at(-1) === "<") open.pop();
    else if (c === "," && open.length === 0) {
      parts.push(s.slice(from, i).trim());
      from = i + 1;
    }
  }
  parts.push(s.slice(from).trim());
  if (parts.length > 1 && parts.at(-1) === "") parts.pop();
  return parts;
}

/**
 * Reads the attributes at the start of a declaration (or of a struct member).
 *
 * @param text The source from offset `at` on.
 * @param at Where `text` starts in the source.
 * @returns The attributes, and the text after them.
 */
export function attributesOf(text: string, at: number): Declaration {
  const attributes: Attribute[] = [];
  let i = 0;
  for (;;) {
    ATTRIBUTE.lastIndex = i;
    const m = ATTRIBUTE.exec(text);
    if (m === null) break;
    const start = at + m.index + m[0].indexOf("@");
    i = ATTRIBUTE.lastIndex;
    let args: string[] = [];
    if (text[i] === "(") {
      let depth = 0;
      let end = i;
      for (; end < text.length; end++) {
        if (text[end] === "(") depth++;
        else if (text[end] === ")" && --depth === 0) break;
      }
      args = splitTopLevel(text.slice(i + 1, end));
      if (args.length === 1 && args[0] === "") args = [];
      i = end + 1;
    }
    attributes.push({ name: m[1]!, args, start, end: at + Math.min(i, text.length) });
  }
  const tail = text.slice(i);
  return { attributes, rest: tail.trim(), restStart: at + i + (tail.length - tail.trimStart().length) };
}

/**
 * The module-scope declarations of a source whose comments are blanked
 * (see {@linkcode stripComments}): split at `;` and after each `{...}` block.
 */
export function moduleDeclarations(src: string): Declaration[] {
  const out: Declaration[] = [];
  let from = 0;
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "{") depth++;
    else if (c === "}" && depth > 0 && --depth === 0) {
      out.push(attributesOf(src.slice(from, i + 1), from));
      from = i + 1;
    } else if (c === ";" && depth === 0) {
      out.push(attributesOf(src.slice(from, i), from));
      from = i + 1;
    }
  }
  out.push(attributesOf(src.slice(from), from));
  return out;
}

/**
 * A declaration as written, for messages: its attributes and text with
 * whitespace collapsed (comments are already blanked in `src`).
 *
 * @param src The source the declaration was read from.
 * @param d The declaration.
 * @returns E.g. `@group(0) @binding(2) var tex: texture_2d<f32>`.
 */
export function declarationText(src: string, d: Declaration): string {
  const start = d.attributes[0]?.start ?? d.restStart;
  const text = src.slice(start, d.restStart + d.rest.length).replace(/\s+/g, " ").trim();
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/**
 * Number of entry points (`@compute`, `@vertex` and `@fragment` functions)
 * the module declares.
 *
 * @param src WGSL source, comments blanked.
 * @returns The count.
 */
export function entryPointCount(src: string): number {
  return [...src.matchAll(/@\s*(?:compute|vertex|fragment)\b/g)].length;
}

/**
 * The names the entry point's body and the functions it calls (transitively)
 * mention: a module variable none of them mentions is not part of its
 * pipeline. Null when the entry point's body cannot be found.
 *
 * @param src WGSL source, comments blanked.
 * @param entryPoint The entry point.
 * @returns The names, or null.
 */
export function reachableNames(src: string, entryPoint: string): Set<string> | null {
  const bodies = new Map<string, string>();
  for (const m of src.matchAll(/\bfn\s+(\w+)\s*\(/g)) {
    const open = src.indexOf("{", m.index + m[0].length);
    if (open < 0) continue;
    let depth = 0;
    let end = open;
    for (; end < src.length; end++) {
      if (src[end] === "{") depth++;
      else if (src[end] === "}" && --depth === 0) break;
    }
    bodies.set(m[1]!, src.slice(open, end + 1));
  }
  if (!bodies.has(entryPoint)) return null;
  const used = new Set<string>([entryPoint]);
  const todo = [entryPoint];
  while (todo.length > 0) {
    for (const [name] of bodies.get(todo.pop()!)!.matchAll(/[A-Za-z_]\w*/g)) {
      if (used.has(name)) continue;
      used.add(name);
      if (bodies.has(name)) todo.push(name);
    }
  }
  return used;
}
