/**
 * Found by auditing `DENOGPU_LOG` parsing with odd values: each `key=value`
 * pair was split with `split("=", 2)`, which drops everything after the
 * second `=`, so `file=/tmp/run=3/gpu.log` logged to `/tmp/run` (or nowhere).
 * A value is everything after the first `=`.
 */

import assert from "node:assert/strict";
import { parseLogEnv } from "../../src/logger.ts";

Deno.test("DENOGPU_LOG file=PATH keeps a path that contains '='", () => {
  assert.deepEqual(parseLogEnv("memory=full,file=/tmp/run=3/gpu=x.log"), {
    memory: "full",
    sink: { file: "/tmp/run=3/gpu=x.log", append: true },
  });
});
