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
    return envGranted(name) ? Deno.env.get(name) : undefined;
  } catch {
    return undefined; // a denied read
  }
}

/**
 * Whether env access to `name` is already granted (so that it can be read
 * without asking), telling a variable that is unset from one that may not be
 * read.
 *
 * @param name The variable.
 * @returns True when it may be read without a prompt.
 */
export function envGranted(name: string): boolean {
  try {
    return Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
  } catch {
    return false; // no permissions API
  }
}
