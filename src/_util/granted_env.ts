/**
 * Reading an environment variable without ever asking for permission.
 *
 * @module
 */

/**
 * The value of `name` when env access to it is already granted, else
 * undefined. It queries the permission first and never requests it: in a
 * terminal, `Deno.env.get` without permission would stop `deno run` at a
 * prompt, and the runtime needs no permission for its core.
 *
 * @param name The variable.
 * @returns Its value, or undefined when unset or not readable without asking.
 */
export function readGrantedEnv(name: string): string | undefined {
  try {
    if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") return undefined;
    return Deno.env.get(name);
  } catch {
    return undefined; // no permissions API, or a denied read
  }
}
