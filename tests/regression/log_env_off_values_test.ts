/**
 * Found by auditing `DENOGPU_LOG` parsing with odd values: `all=disabled` set
 * every subsystem off except profiling, which it turned on at `basic` (every
 * dispatch timestamped, a summary printed at each `sync()`), and a subsystem
 * given an "off" value (`memory=0`, `launches=false`, `profiling=off`) was
 * switched on at `basic`, though `0` and `false` mean off for the whole
 * variable.
 */

import assert from "node:assert/strict";
import { parseLogEnv } from "../../src/logger.ts";

Deno.test("DENOGPU_LOG all=disabled turns every subsystem off, profiling included", () => {
  assert.deepEqual(parseLogEnv("all=disabled"), {
    compilation: "disabled",
    memory: "disabled",
    launches: "disabled",
    profiling: "disabled",
    autotune: "disabled",
  });
});

Deno.test("DENOGPU_LOG values 0, false, off and disabled turn a subsystem off", () => {
  for (const off of ["0", "false", "off", "disabled"]) {
    assert.deepEqual(parseLogEnv(`memory=${off},launches=${off},compilation=${off},profiling=${off}`), {
      memory: "disabled",
      launches: "disabled",
      compilation: "disabled",
      profiling: "disabled",
    }, off);
    assert.deepEqual(parseLogEnv(`all=full,memory=${off}`).memory, "disabled", `all=full,memory=${off}`);
  }
  // What turned them on still does.
  assert.deepEqual(parseLogEnv("memory,launches=1,compilation=true,profiling=minimal"), {
    memory: "basic",
    launches: "basic",
    compilation: "basic",
    profiling: "minimal",
  });
});
