/**
 * Checking an option against its allowed string values.
 *
 * @module
 */

import { describe } from "./describe.ts";

/**
 * Throws a `TypeError` naming the option unless `value` is undefined or one of `allowed`.
 *
 * @param name The option, as the user wrote it (e.g. `logger.memory`).
 * @param value The value given.
 * @param allowed The allowed values.
 * @throws {TypeError} When the value is not allowed.
 */
export function oneOf(name: string, value: unknown, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value as string)) {
    throw new TypeError(
      `createClient: ${name} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}, got ${describe(value)}`,
    );
  }
}
