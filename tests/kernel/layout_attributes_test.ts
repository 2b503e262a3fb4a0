/**
 * Contract under test: the layout reader reads `@id`, `@group`, `@binding`
 * and `@workgroup_size` as WGSL does: integer literals with `i`/`u` suffixes
 * and in hex, module-scope `const` declarations and const-expressions over
 * them, and overrides keyed as WebGPU's `constants` record keys them (by the
 * decimal `@id` when the override has one, else by name). An attribute it
 * cannot evaluate is refused by `defineKernel` with a `KernelLayoutError`
 * naming the kernel and the attribute, rather than misjudged.
 */

import assert from "node:assert/strict";
import { defineKernel, KernelLayoutError, ResourceLimitError } from "../../mod.ts";
import { readU32, withClient } from "../_gpu.ts";

/** x[g.x] += 1 over a workgroup of WG × ROWS, both overrides with numeric ids. */
const NUMERIC_IDS = `
@id(0) override WG: u32 = 64;
@id(0x7u) override ROWS: u32 = 1;
@group(0) @binding(0) var<storage, read_write> x: array<atomic<u32>>;
@compute @workgroup_size(WG, ROWS) fn main() { atomicAdd(&x[0], 1u); }`;

Deno.test("an override with a numeric @id takes the constant keyed by that id", () => {
  const given = defineKernel({ name: "ids", wgsl: NUMERIC_IDS, constants: { "0": 128, "7": 2 } });
  assert.deepEqual(given.layout.workgroupSize, [128, 2, 1]);
  const defaults = defineKernel({ name: "ids", wgsl: NUMERIC_IDS });
  assert.deepEqual(defaults.layout.workgroupSize, [64, 1, 1]);
  // WebGPU keys an override with an @id by that id only: its name is no key for it.
  const byName = defineKernel({ name: "ids", wgsl: NUMERIC_IDS, constants: { WG: 128 } });
  assert.deepEqual(byName.layout.workgroupSize, [64, 1, 1]);
});

Deno.test("a workgroup size set by a numeric @id is checked against the device with the value given", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array([0]));
    // The default alone would exceed every device's limits; the constant given brings it down.
    const big = `@id(3) override WG: u32 = 1048576;
@group(0) @binding(0) var<storage, read_write> x: array<atomic<u32>>;
@compute @workgroup_size(WG) fn main() { atomicAdd(&x[0], 1u); }`;
    client.launch(defineKernel({ name: "fits", wgsl: big, constants: { "3": 16 } }), [1], [x]);
    assert.deepEqual([...await readU32(client, x)], [16]);
    // And the other way round: a constant past the device's limit is refused before any dispatch.
    const over = client.properties.hardware.maxCubeDim[0] * 2;
    const tooWide = defineKernel({ name: "too-wide", wgsl: NUMERIC_IDS, constants: { "0": over } });
    assert.throws(() => client.launch(tooWide, [1], [x]), (e: unknown) => {
      assert.ok(e instanceof ResourceLimitError, String(e));
      assert.equal(e.kernel, "too-wide");
      assert.deepEqual(e.requested, [over, 1, 1]);
      return true;
    });
    assert.deepEqual([...await readU32(client, x)], [16], "the refused kernel dispatched nothing");
  });
});

Deno.test("bindings given by suffixed or hex literals, consts and const-expressions are all counted", () => {
  const wgsl = `
const B = 2u;
const G: i32 = 0i;
const NEXT = B + 1;
@group(0i) @binding(0u) var<storage, read_write> a: array<u32>;
@group(0) @binding(0x1) var<storage, read_write> b: array<u32>;
@group(G) @binding(B) var<storage, read_write> c: array<u32>;
@binding(NEXT,) @ group ( 0u ) var<storage, read_write> d: array<u32>;
@group(0) @binding(u32(max(NEXT, 2)) + (0x1u << 0u)) var<storage, read> e: array<u32>;
@compute @workgroup_size(1) fn main() { a[0] = b[0] + c[0] + d[0] + e[0]; }`;
  assert.equal(defineKernel({ name: "literals", wgsl }).layout.bindings, 5);
});

Deno.test("a binding in another group given by a const takes the argument after those of group 0", () => {
  const wgsl = `
const SECOND = 1;
@group(SECOND) @binding(0) var<storage, read_write> b: array<u32>;
@group(0) @binding(5) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(1) fn main() { a[0] = b[0]; }`;
  const k = defineKernel({ name: "groups", wgsl });
  assert.equal(k.layout.bindings, 2);
  assert.deepEqual(k.layout.bindingNames, ["a", "b"]);
});

Deno.test("a kernel whose bindings use u32 literals and consts launches with all its buffers", async () => {
  const copy = defineKernel({
    name: "copy-suffixed",
    wgsl: `
const DST = 1u;
@group(0u) @binding(0u) var<storage, read_write> src: array<u32>;
@group(0u) @binding(DST) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(0x4) fn main(@builtin(global_invocation_id) g: vec3u) { dst[g.x] = src[g.x] * 3u; }`,
  });
  assert.equal(copy.layout.bindings, 2);
  await withClient(async (client) => {
    const src = client.create(new Uint32Array([1, 2, 3, 4]));
    const dst = client.create(new Uint32Array(4));
    client.launch(copy, [1], [src, dst]);
    assert.deepEqual([...await readU32(client, dst)], [3, 6, 9, 12]);
  });
});

Deno.test("workgroup sizes and workgroup array lengths given by const-expressions are evaluated", () => {
  const wgsl = `
const TILE = 8u;
override SCALE: u32 = 2;
override ROWS = SCALE * 2;
var<workgroup> tile: array<f32, TILE * TILE>;
var<workgroup> halo: array<vec2<u32>, (TILE + 2u) * 1>;
@compute @workgroup_size(TILE * SCALE, ROWS, 0x1) fn main() { tile[0] = 1.0; halo[0] = vec2u(); }
fn helper() { const TILE = 1000u; }`;
  const k = defineKernel({ name: "exprs", wgsl });
  assert.deepEqual(k.layout.workgroupSize, [16, 4, 1]);
  assert.equal(k.layout.sharedMemoryBytes, 64 * 4 + 10 * 8);
  const scaled = defineKernel({ name: "exprs", wgsl, constants: { SCALE: 4 } });
  assert.deepEqual(scaled.layout.workgroupSize, [32, 8, 1]);
});

Deno.test("an attribute the reader cannot evaluate is refused with a KernelLayoutError naming kernel and attribute", () => {
  const refused = (wgsl: string, attribute: string, expression: string, reason: RegExp) => {
    assert.throws(() => defineKernel({ name: "opaque", wgsl }), (e: unknown) => {
      assert.ok(e instanceof KernelLayoutError, String(e));
      assert.equal(e.kind, "unevaluable");
      assert.equal(e.kernel, "opaque");
      assert.equal(e.attribute, attribute);
      assert.equal(e.expression, expression);
      assert.match(e.message, /"opaque"/);
      assert.ok(e.message.includes(`${attribute}(${expression})`), e.message);
      assert.match(e.message, reason);
      return true;
    });
  };
  const body = "@compute @workgroup_size(1) fn main() { x[0] = 1u; }";
  refused(
    `@group(0) @binding(FIRST) var<storage, read_write> x: array<u32>; ${body}`,
    "@binding",
    "FIRST",
    /"FIRST" is not declared/,
  );
  refused(
    `@group(0) @binding(countOneBits(1u)) var<storage, read_write> x: array<u32>; ${body}`,
    "@binding",
    "countOneBits(1u)",
    /countOneBits/,
  );
  refused(
    `override G: u32 = 0; @group(G) @binding(0) var<storage, read_write> x: array<u32>; ${body}`,
    "@group",
    "G",
    /override/,
  );
  refused(
    `const A = 1; @id(A - 2) override WG: u32 = 1; @group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(WG) fn main() { x[0] = 1u; }`,
    "@id",
    "A - 2",
    /negative/,
  );
});
