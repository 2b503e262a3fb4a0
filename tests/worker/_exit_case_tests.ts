/**
 * The cases of `_exit_cases.ts` as tests, for `exit_status_test.ts` to run
 * one at a time in a child `deno test` process.
 */

import { CASES, reportThreadsAtUnload } from "./_exit_cases.ts";

for (const [name, run] of Object.entries(CASES)) {
  Deno.test(name, async () => {
    await run();
    reportThreadsAtUnload();
  });
}
