/**
 * A launch's count as both clients take it (`[x, y?, z?]`, a `Handle`, or a
 * static or dynamic `CubeCount`), spread into workgroups along x, y and z or
 * an indirect binding. One scratch object serves every call, so the launch
 * path allocates nothing for it; read its fields before the next launch.
 *
 * @module
 */

import { Handle } from "../contract/handle.ts";
import { badCountForm } from "../contract/launch_checks.ts";
import type { BufferBinding, CubeCount } from "../contract/types.ts";

/** A count spread out: workgroups along x, y and z, or the binding holding them (then x, y, z are 1). */
export interface SpreadCount {
  x: number;
  y: number;
  z: number;
  indirect: BufferBinding | null;
}

const scratch: SpreadCount = { x: 1, y: 1, z: 1, indirect: null };

/**
 * Spreads a launch's count. The values are checked at the server's door
 * (`checkLaunch`); only the form is checked here.
 *
 * @param kernel The kernel, for errors.
 * @param count The count as given.
 * @returns The shared scratch object, filled.
 * @throws {TypeError} {RangeError} For a count of no known form, or an array of other than 1 to 3 entries.
 */
export function spreadCount(kernel: unknown, count: unknown): SpreadCount {
  const c = scratch;
  c.x = 1;
  c.y = 1;
  c.z = 1;
  c.indirect = null;
  if (Array.isArray(count)) {
    const n = count.length;
    if (n < 1 || n > 3) badCountForm(kernel, count);
    c.x = count[0];
    if (n > 1) {
      c.y = count[1];
      if (n > 2) c.z = count[2];
    }
  } else if (count instanceof Handle) {
    c.indirect = count;
  } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "static") {
    const s = count as { x: number; y: number; z: number };
    c.x = s.x;
    c.y = s.y;
    c.z = s.z;
  } else if (count !== null && typeof count === "object" && (count as CubeCount).kind === "dynamic") {
    c.indirect = (count as { binding: BufferBinding }).binding;
  } else {
    badCountForm(kernel, count);
  }
  return c;
}
