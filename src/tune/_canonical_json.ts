/**
 * JSON with object keys sorted, so that equal keys give equal strings
 * whatever order their properties were written in.
 *
 * @module
 */

/**
 * Serialises a key as canonical JSON.
 *
 * @param value The key.
 * @param where The caller, for the message.
 * @returns The JSON text.
 * @throws {TypeError} When the value holds something JSON cannot carry
 * (undefined, a function, a symbol, a bigint, a non-finite number, a cycle).
 */
export function canonicalJson(value: unknown, where: string): string {
  const seen = new Set<object>();
  const walk = (v: unknown, path: string): unknown => {
    if (v === null || typeof v === "string" || typeof v === "boolean") return v;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new TypeError(`${where}: the key holds ${v} at ${path}; keys must be JSON`);
      return v;
    }
    if (typeof v !== "object") {
      throw new TypeError(`${where}: the key holds a ${typeof v} at ${path}; keys must be JSON`);
    }
    if (seen.has(v)) throw new TypeError(`${where}: the key is cyclic at ${path}`);
    seen.add(v);
    let out: unknown;
    if (Array.isArray(v)) {
      out = v.map((x, i) => walk(x, `${path}[${i}]`));
    } else {
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) o[k] = walk((v as Record<string, unknown>)[k], `${path}.${k}`);
      out = o;
    }
    seen.delete(v);
    return out;
  };
  return JSON.stringify(walk(value, "key"));
}
