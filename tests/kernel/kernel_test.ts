/**
 * Contract under test: `defineKernel()` validates its options, derives a
 * stable id, and reads workgroup size, binding count and shared memory from
 * the WGSL source.
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { readU32, withClient } from "../_gpu.ts";

const SRC = `
// a comment with @binding(9) that must be ignored
struct Info { n: u32 }
override WG: u32 = 64;
const TILE = 16u;
var<workgroup> tile: array<f32, 256>;
var<workgroup> other: array<vec4<f32>, TILE>;
var<workgroup> third: array<u32, 16u>;
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@binding(1) @group(0) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read> info: Info;
@compute @workgroup_size(WG, 2) fn run(@builtin(global_invocation_id) g: vec3u) {
  tile[0] = a[0] + b[info.n]; other[0] = vec4f(); third[0] = 1u;
}
@compute @workgroup_size(8) fn other_entry() {}
`;

Deno.test("defineKernel() reads the workgroup size, bindings and shared memory of its entry point", () => {
  const k = defineKernel({ name: "k", wgsl: SRC, entryPoint: "run" });
  assert.deepEqual(k.layout.workgroupSize, [64, 2, 1]);
  assert.equal(k.layout.bindings, 3);
  assert.equal(k.layout.sharedMemoryBytes, 256 * 4 + 16 * 16 + 16 * 4);
  const k2 = defineKernel({ name: "k", wgsl: SRC, entryPoint: "other_entry" });
  assert.deepEqual(k2.layout.workgroupSize, [8, 1, 1]);
  const k3 = defineKernel({ name: "k", wgsl: SRC, entryPoint: "run", constants: { WG: 128 } });
  assert.deepEqual(k3.layout.workgroupSize, [128, 2, 1]);
});

Deno.test("defineKernel() gives identical sources identical ids, and any change a new id", () => {
  const a = defineKernel({ name: "k", wgsl: SRC, entryPoint: "run" });
  const b = defineKernel({ name: "k", wgsl: SRC, entryPoint: "run" });
  assert.equal(a.id, b.id);
  assert.match(a.id, /^k-[0-9a-f]{16}$/);
  const ids = new Set([
    a.id,
    defineKernel({ name: "k", wgsl: SRC + " ", entryPoint: "run" }).id,
    defineKernel({ name: "k", wgsl: SRC, entryPoint: "other_entry" }).id,
    defineKernel({ name: "k", wgsl: SRC, entryPoint: "run", constants: { WG: 1 } }).id,
    defineKernel({ name: "k", wgsl: SRC, entryPoint: "run", constants: { WG: 2 } }).id,
    defineKernel({ name: "j", wgsl: SRC, entryPoint: "run" }).id,
  ]);
  assert.equal(ids.size, 6);
});

Deno.test("defineKernel() rejects bad options with a TypeError naming the field", () => {
  assert.throws(() => defineKernel({ name: "", wgsl: SRC }), /name must be a non-empty string/);
  assert.throws(() => defineKernel({ name: "x", wgsl: "  " }), /wgsl must be a non-empty string/);
  assert.throws(() => defineKernel({ name: "x", wgsl: SRC, entryPoint: "1bad" }), /entryPoint/);
  assert.throws(() => defineKernel({ name: "x", wgsl: SRC, constants: { WG: NaN } }), /constant "WG"/);
  assert.throws(() => defineKernel(null as never), /options must be an object/);
});

Deno.test("a source whose layout cannot be read leaves those facts unknown", () => {
  const k = defineKernel({
    name: "dyn",
    wgsl: "var<workgroup> s: array<MyStruct, 4>; @compute @workgroup_size(f(2)) fn main() {}",
  });
  assert.equal(k.layout.workgroupSize, null);
  assert.equal(k.layout.bindings, null);
  assert.equal(k.layout.sharedMemoryBytes, null);
});

Deno.test("comments hide exactly what they enclose: nested block comments, and /* inside a line comment", async () => {
  // WGSL block comments nest; a `/*` inside a line comment opens nothing.
  const nested = defineKernel({
    name: "nested",
    wgsl: `
/* an old version, kept for reference:
   /* (it had a second output) */
   @group(0) @binding(1) var<storage, read_write> old: array<u32>;
   @compute @workgroup_size(1024) fn main() {}
*/
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }`,
  });
  assert.equal(nested.layout.bindings, 1);
  assert.deepEqual(nested.layout.workgroupSize, [1, 1, 1]);
  const line = defineKernel({
    name: "line",
    wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>; // see /* below
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
/* y is x + 1 */
@compute @workgroup_size(1) fn main() { y[0] = x[0] + 1u; }`,
  });
  assert.equal(line.layout.bindings, 2);
  await withClient(async (client) => {
    const x = client.create(new Uint32Array([41]));
    const y = client.create(new Uint32Array([0]));
    client.launch(nested, [1], [x]);
    client.launch(line, [1], [x, y]);
    assert.deepEqual([...await readU32(client, y)], [43]);
  });
});

Deno.test("in a module of several entry points, each counts the bindings and shared memory it uses", async () => {
  const wgsl = `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
var<workgroup> big_a: array<u32, 3072>;
var<workgroup> big_b: array<u32, 3072>;
fn bump(i: u32) { x[i] = x[i] + 1u; }
@compute @workgroup_size(1) fn one() { big_a[0] = 1u; bump(0u); }
@compute @workgroup_size(1) fn two() { big_b[0] = x[0]; y[0] = big_b[0]; }`;
  const one = defineKernel({ name: "one", wgsl, entryPoint: "one" });
  const two = defineKernel({ name: "two", wgsl, entryPoint: "two" });
  assert.equal(one.layout.bindings, 1);
  assert.equal(one.layout.sharedMemoryBytes, 3072 * 4);
  assert.equal(two.layout.bindings, 2);
  assert.equal(two.layout.sharedMemoryBytes, 3072 * 4);
  await withClient(async (client) => {
    const x = client.create(new Uint32Array([41]));
    const y = client.create(new Uint32Array([0]));
    client.launch(one, [1], [x]); // 12 KiB of workgroup memory: within the 16 KiB every device has
    client.launch(two, [1], [x, y]);
    assert.deepEqual([...await readU32(client, y)], [42]);
  });
});

Deno.test("defineKernel() refuses an entry point the source does not declare, also one only in a comment", () => {
  const wgsl = "// fn run() {}\n@compute @workgroup_size(1) fn main() {}";
  assert.throws(
    () => defineKernel({ name: "k", wgsl, entryPoint: "run" }),
    (e: unknown) => e instanceof TypeError && /"run"/.test(e.message),
  );
  assert.throws(() => defineKernel({ name: "k", wgsl: "@compute @workgroup_size(1) fn mainly() {}" }), TypeError);
  assert.equal(defineKernel({ name: "k", wgsl }).entryPoint, "main");
});
