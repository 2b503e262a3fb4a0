/**
 * Contract under test: the buffers of a launch bind in `(group, binding)`
 * order, whatever the groups, the gaps in the numbering, the order of the
 * declarations and of their attributes; info words take the last binding.
 * The runtime compiles a copy of the source with every binding in group 0
 * at its argument index, keeping the user's names and line breaks.
 */

import assert from "node:assert/strict";
import { CompilationError, defineKernel, ServerUnhealthyError } from "../../mod.ts";
import { readU32, withClient } from "../_gpu.ts";

/** out[i] = a[i] * p.k + b[i] - c[i] + (words[0] when given), over buffers spread across three groups. */
const GROUPS = `
struct P { k: u32 }
@group(1) @binding(0)
var<storage, read> b: array<u32>;                      // argument 2
@binding(2) @group(0) var<storage, read_write> out: array<u32>; // argument 1
@group(0) /* params first */ @binding(0) var<uniform> p: P;      // argument 0
@group(2)
  @binding(1)
  var<storage> c: array<u32>;                          // argument 3

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i < arrayLength(&out)) { out[i] = a_of(i) * p.k + b[i] - c[i]; }
}
fn a_of(i: u32) -> u32 { return i + 1u; }
`;

Deno.test("buffers in groups 0, 1 and 2 bind in (group, binding) order, one launch argument each", async () => {
  const kernel = defineKernel({ name: "groups", wgsl: GROUPS });
  assert.equal(kernel.layout.bindings, 4);
  assert.deepEqual(kernel.layout.bindingNames, ["p", "out", "b", "c"]);
  const n = 100;
  const b = Uint32Array.from({ length: n }, (_, i) => 1000 + 3 * i);
  const c = Uint32Array.from({ length: n }, (_, i) => i % 7);
  await withClient(async (client) => {
    const p = client.create(new Uint32Array([5]));
    const out = client.empty(4 * n);
    client.launch(kernel, [2], [p, out, client.create(b), client.create(c)]);
    assert.deepEqual([...await readU32(client, out)], Array.from({ length: n }, (_, i) => (i + 1) * 5 + b[i]! - c[i]!));
  });
});

Deno.test("with info words the last binding in (group, binding) order takes them, in any group", async () => {
  const kernel = defineKernel({
    name: "info-in-group-1",
    wgsl: `
struct Info { n: u32, add: u32 }
@group(1) @binding(0) var<storage, read> info: Info;
@group(0) @binding(4) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < info.n) { x[g.x] += info.add; }
}`,
  });
  assert.deepEqual(kernel.layout.bindingNames, ["x", "info"]);
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(8));
    client.launch(kernel, [1], [x], new Uint32Array([5, 3]));
    client.launch(kernel, [1], [x], new Uint32Array([2, 10]));
    assert.deepEqual([...await readU32(client, x)], [13, 13, 3, 3, 3, 0, 0, 0]);
  });
});

Deno.test("a launch whose buffers do not number the bindings is refused, naming them in order", async () => {
  const kernel = defineKernel({ name: "groups", wgsl: GROUPS });
  await withClient((client) => {
    const x = client.create(new Uint32Array(4));
    assert.throws(() => client.launch(kernel, [1], [x, x, x]), (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /declares 4 bindings \(p, out, b, c: one buffer each in \(group, binding\) order/);
      assert.match(e.message, /binds 3 buffers and no info words/);
      return true;
    });
    assert.throws(() => client.launch(kernel, [1], [x, x, x, x], new Uint32Array([1])), /plus info words/);
  });
});

Deno.test("the compiled source keeps the user's names and line numbers, so compiler messages point at their lines", async () => {
  const wgsl = `
struct P { k: f32 }
@group(1) @binding(0) var<uniform> p: P;
@group(0)
  @binding(3) var<storage,
                  read> src: array<u32>;
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(1) fn main() {
  dst[0] = src[0] + p.k; // line 9: u32 + f32
}`;
  const kernel = defineKernel({ name: "broken", wgsl });
  const compiled = kernel.compiledWgsl(false);
  assert.equal(kernel.wgsl, wgsl, "the user's source is kept as given");
  assert.equal(compiled.split("\n").length, wgsl.split("\n").length);
  assert.equal(compiled.split("\n")[8], wgsl.split("\n")[8]);
  assert.match(compiled, /@group\(0\) @binding\(2\) var<storage, read_write> p: P;/);
  assert.match(compiled, /@group\(0\)\n {2}@binding\(1\) var<storage, read_write>\n src: array<u32>;/);
  // With info words a last binding declared var<uniform> binds as a uniform.
  assert.match(kernel.compiledWgsl(true), /@group\(0\) @binding\(2\) var<uniform> p: P;/);
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(1));
    client.launch(kernel, [1], [x, x, x]);
    await assert.rejects(() => client.flush(), (e: unknown) => {
      assert.ok(e instanceof ServerUnhealthyError);
      const err = e.errors[0];
      assert.ok(err instanceof CompilationError, String(err));
      assert.match(err.message, /broken/);
      assert.match(err.message, /:9:/, "the line of the user's source");
      assert.match(err.message, /dst\[0\] = src\[0\] \+ p\.k/);
      return true;
    });
  });
});
