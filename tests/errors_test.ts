/** Contract under test: errors carry the fields callers branch on and say what failed. */

import assert from "node:assert/strict";
import {
  CompilationError,
  IoError,
  LaunchError,
  ResourceLimitError,
  ServerError,
  ServerUnhealthyError,
} from "../mod.ts";

Deno.test("ServerUnhealthyError lists every queued error in its message, oldest first", () => {
  const e = new ServerUnhealthyError(3, [new CompilationError("k", "bad token"), new IoError("not-found", "gone")]);
  assert.equal(e.stream, 3);
  assert.equal(e.errors.length, 2);
  assert.match(e.message, /stream 3 is unhealthy: 2 queued errors/);
  assert.match(e.message, /1\. \[CompilationError\] WGSL compilation failed for kernel "k"/);
  assert.match(e.message, /2\. \[IoError\] gone/);
  assert.equal(e.cause, e.errors[0]);
});

Deno.test("error classes form one hierarchy with their own names", () => {
  const c = new CompilationError("k", "m");
  assert.ok(c instanceof LaunchError && c instanceof ServerError && c instanceof Error);
  assert.equal(c.name, "CompilationError");
  const r = new ResourceLimitError("units", "k", [2048], [1024], "maxComputeInvocationsPerWorkgroup");
  assert.equal(r.kind, "too-many-resources");
  assert.match(r.message, /2048 exceeds the device limit maxComputeInvocationsPerWorkgroup = 1024/);
});
