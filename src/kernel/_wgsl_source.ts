/**
 * WGSL source scanning for the layout reader: comments stripped as WGSL
 * reads them, module-scope declarations split off with their attributes
 * (each attribute's expressions split at top-level commas), and the names an
 * entry point reaches.
 *
 * @module
 */

/** An attribute: its name without `@`, and its expressions split at top-level commas. */
export interface Attribute {
  /** The name, without `@`. */
  readonly name: string;
  /** Its expressions (none when it has no parentheses). */
  readonly args: readonly string[];
}

/** A module-scope declaration: its attributes, and the text after them. */
export interface Declaration {
  /** The attributes before the declaration, in order. */
  readonly attributes: readonly Attribute[];
  /** The declaration itself, from its keyword on, trimmed. */
  readonly rest: string;
}

/** A WGSL identifier, as a regular expression source (for the `u` flag). */
export const IDENT: string = String.raw`[\p{XID_Start}_]\p{XID_Continue}*`;
const ATTRIBUTE = new RegExp(String.raw`\s*@\s*(${IDENT})\s*`, "uy");
const IDENT_BEFORE = new RegExp(String.raw`(?<!\p{XID_Continue})${IDENT}\s*$`, "u");

/**
 * Replaces every comment with a space, as WGSL reads them: block comments
 * nest, and a line comment (which may contain `/*`) ends at the line break.
 *
 * @param src WGSL source.
 * @returns The source without comments.
 */
export function stripComments(src: string): string {
  let out = "";
  let from = 0; // start of the code not yet copied
  let i = 0;
  while (i < src.length - 1) {
    const two = src.slice(i, i + 2);
    if (two === "//") {
      out += src.slice(from, i) + " ";
      const end = src.indexOf("\n", i);
      i = from = end < 0 ? src.length : end;
    } else if (two === "/*") {
      out += src.slice(from, i) + " ";
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

/** Reads the attributes at the start of a declaration. */
function declaration(text: string): Declaration {
  const attributes: Attribute[] = [];
  let i = 0;
  for (;;) {
    ATTRIBUTE.lastIndex = i;
    const m = ATTRIBUTE.exec(text);
    if (m === null) break;
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
    attributes.push({ name: m[1]!, args });
  }
  return { attributes, rest: text.slice(i).trim() };
}

/** The module-scope declarations of a source without comments: split at `;` and after each `{...}` block. */
export function moduleDeclarations(src: string): Declaration[] {
  const out: Declaration[] = [];
  let from = 0;
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "{") depth++;
    else if (c === "}" && depth > 0 && --depth === 0) {
      out.push(declaration(src.slice(from, i + 1)));
      from = i + 1;
    } else if (c === ";" && depth === 0) {
      out.push(declaration(src.slice(from, i)));
      from = i + 1;
    }
  }
  out.push(declaration(src.slice(from)));
  return out;
}

/**
 * In a module of several entry points, the names the entry point's body and
 * the functions it calls (transitively) mention: module variables outside it
 * are not part of its pipeline. Null when the module has one entry point (all
 * its declarations count) or the entry point's body cannot be found.
 */
export function entryPointUses(src: string, entryPoint: string): Set<string> | null {
  if ([...src.matchAll(/@compute\b/g)].length < 2) return null;
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
