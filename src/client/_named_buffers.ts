/**
 * Launches by binding name: `client.launch(kernel, count, { x, y }, info)`.
 * The names are the kernel's `layout.bindingNames` (the WGSL variables, in
 * argument order), less the last one when info words are given, which takes
 * them. The handles are put in argument order into an array the client keeps
 * for this, and the launch goes down the positional path, whose door checks them as it checks any launch; so a named launch is
 * a positional one, for the stream, the Worker link and graph capture alike.
 *
 * @module
 */

import { Handle } from "../contract/handle.ts";
import { Kernel } from "../contract/kernel.ts";
import type { LinkLauncher } from "../contract/device_link.ts";
import type { BufferBinding, InfoWords, LaunchMode } from "../contract/types.ts";
import type { StreamId } from "../ids.ts";
import { describe } from "../_util/describe.ts";

/** A launch's buffers by the WGSL names of the bindings they take. */
export type NamedBuffers = Readonly<Record<string, Handle>>;

/**
 * Queues a launch whose buffers are given by binding name: checks the names
 * against the kernel's, fills `scratch` with the handles in argument order and
 * launches positionally with it. Nothing is allocated once `scratch` has
 * grown to the kernel's bindings.
 *
 * @param launcher The link's launch path.
 * @param scratch The array to fill (the client's, reused; it keeps the handles until the next fill).
 * @param kernel The kernel.
 * @param named The handles by binding name.
 * @param info Info words, or null.
 * @param x Workgroups along x.
 * @param y Workgroups along y.
 * @param z Workgroups along z.
 * @param indirect Memory holding `[x, y, z]`, or null.
 * @param mode `execute` or `skip`.
 * @param stream The stream.
 * @throws {TypeError} For a kernel not made by `defineKernel`, buffers that
 * are not an object, a name the kernel does not bind (or that takes the info
 * words), a name missing, or a value that is not a `Handle`; and whatever the
 * door throws.
 */
export function launchNamed(
  launcher: LinkLauncher,
  scratch: BufferBinding[],
  kernel: Kernel,
  named: NamedBuffers,
  info: InfoWords | null,
  x: number,
  y: number,
  z: number,
  indirect: BufferBinding | null,
  mode: LaunchMode,
  stream: StreamId,
): void {
  if (!(kernel instanceof Kernel)) throw new TypeError("launch: kernel must come from defineKernel()");
  if (named === null || typeof named !== "object") badNamed(kernel, named, info);
  const names = kernel.layout.bindingNames;
  const n = names.length - (info !== null && info.length > 0 ? 1 : 0);
  if (scratch.length > n) scratch.length = n;
  while (scratch.length < n) scratch.push(EMPTY); // packed, not holey
  // Over the object's keys: V8 then loads each value through the for-in cache, without hashing the key
  // (a lookup by each binding name cost a third more at four buffers). Keys are distinct, so n of them,
  // each a buffer's name, are every buffer once.
  let given = 0;
  for (const key in named) {
    let i = 0;
    while (i < n && names[i] !== key) i++;
    const h = named[key];
    if (i === n || !(h instanceof Handle)) badNamed(kernel, named, info);
    scratch[i] = h;
    given++;
  }
  if (given !== n) badNamed(kernel, named, info);
  launcher.launch(kernel, scratch, info, x, y, z, indirect, mode, stream, false);
}

/** What a grown array holds until filled. */
const EMPTY = null as unknown as BufferBinding;

/**
 * Throws the error a launch's named buffers deserve: buffers that are not an
 * object, a name the kernel does not bind (or the one taking the info words),
 * a name missing, or a value that is not a `Handle`; each naming the kernel's
 * binding names.
 */
function badNamed(kernel: Kernel, named: unknown, info: InfoWords | null): never {
  const names = kernel.layout.bindingNames;
  const withInfo = info !== null && info.length > 0;
  const buffers = withInfo ? names.slice(0, -1) : names;
  const infoName = withInfo ? names[names.length - 1] : undefined;
  const list = buffers.length === 0 ? "none" : buffers.map((s) => `"${s}"`).join(", ");
  const known = `the kernel's buffers by name: ${list}${
    infoName !== undefined ? `; info words take "${infoName}"` : ""
  }, from its bindings (${names.join(", ")})`;
  const at = `launch(${kernel.name})`;
  if (named === null || typeof named !== "object") {
    throw new TypeError(
      `${at}: buffers must be an array of Handle, or an object of Handles by binding name (${known}), got ${
        describe(named)
      }`,
    );
  }
  const record = named as Record<string, unknown>;
  for (const key in record) {
    if (key === infoName) {
      throw new TypeError(
        `${at}: "${key}" takes the info words given to this launch, so it is not among the buffers (${known})`,
      );
    }
    if (!buffers.includes(key)) {
      throw new TypeError(`${at}: the kernel binds no buffer named "${key}" (${known})`);
    }
  }
  for (const name of buffers) {
    if (!(name in record)) {
      const hint = !withInfo && name === names[names.length - 1]
        ? `; or, if "${name}" takes info words, pass them as info`
        : "";
      throw new TypeError(`${at}: no buffer given for "${name}" (${known})${hint}`);
    }
    const v = record[name];
    if (!(v instanceof Handle)) throw new TypeError(`${at}: buffer "${name}" must be a Handle, got ${describe(v)}`);
  }
  // Not reached: the caller found a fault this function names.
  throw new TypeError(`${at}: bad buffers by name (${known})`);
}
