/**
 * Tests stay valid on llvmpipe: its invocations stop silently after 65535 loop
 * iterations in total, so every test kernel with a loop declares its worst
 * case (`defineLoopKernel`) and its launches are checked against the limit.
 */

import assert from "node:assert/strict";
import { checkLoopBudget, defineLoopKernel, LLVMPIPE_LOOP_LIMIT } from "./_loop_budget.ts";

const LOOP = /\b(for|while)\s*\(|\bloop\s*\{/;

/** The WGSL of every `defineKernel({ ... wgsl: `...` })` call in `text`. */
function kernelSources(text: string): string[] {
  const found: string[] = [];
  for (let at = text.indexOf("defineKernel("); at >= 0; at = text.indexOf("defineKernel(", at + 1)) {
    const wgsl = text.indexOf("wgsl:", at);
    const open = wgsl < 0 ? -1 : text.indexOf("`", wgsl);
    if (open < 0 || text.slice(at, wgsl).includes("defineKernel(", 1)) continue;
    let close = open + 1;
    while (close < text.length && (text[close] !== "`" || text[close - 1] === "\\")) close++;
    found.push(text.slice(open + 1, close).replace(/\/\/[^\n]*/g, ""));
  }
  return found;
}

/** Every .ts file under `dir`. */
function* files(dir: URL): Generator<URL> {
  for (const e of Deno.readDirSync(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* files(url);
    else if (e.name.endsWith(".ts")) yield url;
  }
}

Deno.test("no test kernel with a loop is defined without a loop budget (defineLoopKernel)", () => {
  const offenders: string[] = [];
  for (const url of files(new URL("./", import.meta.url))) {
    if (url.pathname.endsWith("/_loop_budget.ts") || url.pathname.endsWith("/loop_budget_test.ts")) continue;
    for (const wgsl of kernelSources(Deno.readTextFileSync(url))) {
      if (LOOP.test(wgsl)) offenders.push(`${url.pathname}: ${wgsl.trim().split("\n")[0]}`);
    }
  }
  assert.deepEqual(offenders, [], "define these with defineLoopKernel so their launches are checked");
});

Deno.test("the scan finds a loop in a kernel defined with defineKernel", () => {
  const text = "const k = defineKernel({ name: 'x', wgsl: `fn main() { for (var i = 0u; i < 4u; i++) {} }` });";
  assert.equal(kernelSources(text).filter((w) => LOOP.test(w)).length, 1);
  assert.equal(kernelSources(text.replace("for (", "f(")).filter((w) => LOOP.test(w)).length, 0);
});

const spin = defineLoopKernel({
  name: "budget-spin",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> n: u32;
@compute @workgroup_size(1) fn main() { var a = 0u; for (var i = 0u; i < n; i++) { a += i; } out[0] = a; }`,
}, ({ info }) => info[0]!);

Deno.test("checkLoopBudget passes a launch up to 65535 iterations and refuses one beyond", () => {
  assert.equal(checkLoopBudget(spin, [1], new Uint32Array([LLVMPIPE_LOOP_LIMIT])), LLVMPIPE_LOOP_LIMIT);
  assert.throws(
    () => checkLoopBudget(spin, [1], new Uint32Array([LLVMPIPE_LOOP_LIMIT + 1])),
    (e: unknown) => e instanceof RangeError && /budget-spin.*65536 loop iterations.*65535/.test(e.message),
  );
});
