/**
 * The launch path's shape, as V8 compiles it: `LaunchPath.launch` must stay
 * small enough (at most 460 bytes of bytecode) to be inlined into
 * `ComputeClient.launch`. From a2b7a62 until 50c3de7 it was not, and every
 * launch paid a call with ten arguments (bench/RESULTS.md, "Launch cost on
 * llvmpipe"). No timing: the test reads V8's inlining trace of a bare launch
 * loop (`bench/launch_loop.ts`), which names functions but not their files,
 * so it looks for a `launch` inlined into a `launch`.
 */

import assert from "node:assert/strict";

Deno.test("LaunchPath.launch is inlined into ComputeClient.launch once V8 optimizes a launch loop", async () => {
  const loop = new URL("../../bench/launch_loop.ts", import.meta.url);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", "--allow-read", "--v8-flags=--trace-turbo-inlining", loop.href],
    env: { ITER: "150", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(text, /per launch/, "the loop ran to its end");
  const inlined = text.split("\n").filter((l) =>
    /^Inlining .*<SharedFunctionInfo launch>\} into .*<SharedFunctionInfo launch>\}/.test(l)
  );
  const refused = text.split("\n").filter((l) =>
    /<SharedFunctionInfo launch>\} for inlining \(reason: exceeds bytecode limit\)/.test(l)
  );
  assert.ok(
    inlined.length > 0,
    `no launch was inlined into another launch; V8 refused these as too large:\n${[...new Set(refused)].join("\n")}`,
  );
});
