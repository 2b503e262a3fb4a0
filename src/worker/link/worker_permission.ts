/**
 * The one permission a worker client may need beyond the main module's: a
 * module Worker loaded from a local file needs read access to the modules it
 * loads (Deno checks it for a Worker's module graph, not for the main
 * module's). Imported from JSR or another https URL, the Worker's modules
 * need only the import permission the main module already used (jsr.io is
 * allowed by default). This check runs before the Worker is started, so a
 * missing permission is a typed error naming the flag, never a prompt or a
 * Worker that dies on load.
 *
 * @module
 */

/**
 * The local path of a `file:` URL (POSIX or Windows).
 *
 * @param url The URL.
 * @returns The path.
 */
export function filePath(url: URL): string {
  const path = decodeURIComponent(url.pathname);
  return /^\/[A-Za-z]:\//.test(path) ? path.slice(1).replaceAll("/", "\\") : path;
}

/**
 * Throws unless the Worker at `url` can load its modules.
 *
 * @param url The Worker's entry module.
 * @throws {Deno.errors.NotCapable} When it is a local file and read access
 * to the runtime's folder is not granted.
 */
export function checkWorkerPermission(url: URL): void {
  if (url.protocol !== "file:") return;
  // A `deno compile` binary serves its modules from an embedded file system under
  // `…/deno-compile-<name>/`: Deno decides there (not verified here: no `deno compile` run in the tests).
  if (url.pathname.includes("/deno-compile-")) return;
  const root = filePath(new URL("../../..", url));
  const status = Deno.permissions.querySync?.({ name: "read", path: root });
  if (status === undefined || status.state === "granted") return;
  throw new Deno.errors.NotCapable(
    `createClient({ worker: true }): the Worker loads the runtime's modules from ${root}, which needs read access there: run with --allow-read=${root} (imported from JSR or another https URL, the runtime's Worker needs no permission beyond the import)`,
  );
}
