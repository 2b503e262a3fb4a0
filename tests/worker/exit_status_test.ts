/**
 * Contract under test: a process that held worker clients ends with exit
 * status 0, and no Worker thread is still running when it ends, whatever
 * path its clients took (a compile error, a validation error, reads pending
 * at destroy, a three-worker all-reduce, a main-thread client beside a
 * worker client, `ended` not awaited, a client never destroyed), under
 * `deno test` and `deno run`, with or without read access to `/proc`.
 *
 * The cause found on the H200 (NVIDIA 580, Vulkan): a Worker that closed
 * itself still tears its device down on its thread, and a process that
 * exited meanwhile segfaulted, aborted or hung in the driver although every
 * test had passed. The runtime now blocks at `unload` until those threads
 * are gone (`src/worker/thread_exit.ts`). Each child prints the Worker
 * threads it finds still running at `unload`, after the runtime's listener:
 * on llvmpipe that list was never empty before the change.
 */

import assert from "node:assert/strict";
import { filePath } from "../../src/worker/link/worker_permission.ts";
import { CASES } from "./_exit_cases.ts";

const ROOT = new URL("../..", import.meta.url);
const PROGRAM = filePath(new URL("./_exit_cases.ts", import.meta.url));
const TESTS = filePath(new URL("./_exit_case_tests.ts", import.meta.url));
const LIMIT_MS = 90_000;

/** Runs deno with `args`; returns its exit code and output. */
async function deno(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const result = await new Deno.Command(Deno.execPath(), {
    args,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(LIMIT_MS),
  }).output();
  const text = new TextDecoder().decode(result.stdout) + new TextDecoder().decode(result.stderr);
  return { code: result.code, out: text };
}

for (const name of Object.keys(CASES)) {
  Deno.test(`a deno test process whose worker clients took the path "${name}" exits with status 0 and no Worker thread left`, async () => {
    const { code, out } = await deno(["test", "--no-check", "--allow-all", `--filter=/^${name}$/`, TESTS]);
    assert.match(out, /ok \| 1 passed/, out);
    assert.match(out, /no worker thread at unload/, out);
    assert.equal(code, 0, out);
  });
}

for (const name of ["allReduceThree", "notAwaited"]) {
  Deno.test(`a deno run program whose worker clients took the path "${name}" exits with status 0 and no Worker thread left`, async () => {
    const { code, out } = await deno(["run", "--no-check", "--allow-all", PROGRAM], { EXIT_CASE: name });
    assert.match(out, new RegExp(`case ${name} done`), out);
    assert.match(out, /no worker thread at unload/, out);
    assert.equal(code, 0, out);
  });
}

Deno.test("a deno test process whose Worker's thread cannot be watched (no access to /proc) exits with status 0", async () => {
  const { code, out } = await deno([
    "test",
    "--no-check",
    "--allow-env",
    `--allow-read=${filePath(ROOT)}`,
    "--filter=/^(plain|forgotten)$/",
    TESTS,
  ]);
  assert.match(out, /ok \| 2 passed/, out);
  assert.equal(code, 0, out);
});
