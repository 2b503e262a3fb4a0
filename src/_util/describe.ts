/**
 * How an error message names a value the user passed: its type as well as
 * its value, so `empty("1024")` reads "got the string \"1024\"", not "got 1024".
 *
 * @module
 */

/**
 * Describes a value for an error message.
 *
 * @param value The value given.
 * @returns E.g. `the string "16"`, `1.5`, `null`, `an array of 3`, `an object { x, y }`, `a function f`.
 */
export function describe(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
    case "function":
      return value.name ? `a function ${value.name}` : "a function";
    case "symbol":
      return `the symbol ${String(value.description ?? "")}`;
    case "bigint":
      return `the bigint ${value}n`;
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) return `an array of ${value.length}`;
      const tag = Object.prototype.toString.call(value).slice(8, -1);
      if (tag !== "Object") return `a ${tag}`;
      const keys = Object.keys(value);
      return keys.length === 0
        ? "an empty object"
        : `an object { ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? ", ..." : ""} }`;
    }
    default:
      return String(value);
  }
}

/**
 * Turns whatever was thrown into a message.
 *
 * @param error The error.
 * @returns `name: message` for an `Error`, else its string form.
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
