/**
 * Contract under test: what the runtime cannot bind is refused by
 * `defineKernel`, at once, with a `KernelLayoutError` naming the kernel, the
 * declaration, the rule and the fix, never at the next sync: textures,
 * samplers and storage textures the entry point uses, a `var` of another
 * address space with `@group`/`@binding`, a buffer missing one of them, and
 * two buffers at one `(group, binding)`. What the entry point does not use is
 * left alone.
 */

import assert from "node:assert/strict";
import { defineKernel, KernelLayoutError } from "../../mod.ts";
import type { KernelLayoutErrorKind } from "../../server.ts";
import { readU32, withClient } from "../_gpu.ts";

const X = "@group(0) @binding(0) var<storage, read_write> x: array<u32>;";

/** Asserts that `defineKernel` refuses the source with the kind, declaration and message given. */
function refused(wgsl: string, kind: KernelLayoutErrorKind, declaration: string, rule: RegExp, fix: RegExp): void {
  assert.throws(() => defineKernel({ name: "port", wgsl }), (e: unknown) => {
    assert.ok(e instanceof KernelLayoutError, String(e));
    assert.equal(e.kind, kind);
    assert.equal(e.kernel, "port");
    assert.equal(e.declaration, declaration);
    assert.match(e.message, /^defineKernel\("port"\): /);
    assert.ok(e.message.includes(`\`${declaration}\``), e.message);
    assert.match(e.reason, rule);
    assert.match(e.fix, fix);
    assert.ok(e.message.includes(e.fix), e.message);
    return true;
  });
}

Deno.test("defineKernel() refuses a texture, a sampler or a storage texture the entry point uses, naming the declaration", () => {
  refused(
    `${X}\n@group(0) @binding(2)\n  var tex: texture_2d<f32>; // the input image
@compute @workgroup_size(1) fn main() { x[0] = u32(textureLoad(tex, vec2i(0), 0).x); }`,
    "unbindable",
    "@group(0) @binding(2) var tex: texture_2d<f32>",
    /buffers only, not textures/,
    /storage buffer|var<storage/,
  );
  refused(
    `${X}\n@group(1) @binding(0) var s: sampler;
fn touch() { _ = s; }
@compute @workgroup_size(1) fn main() { touch(); x[0] = 1u; }`,
    "unbindable",
    "@group(1) @binding(0) var s: sampler",
    /not samplers/,
    /filter in the shader/,
  );
  refused(
    `${X}\n@group(0) @binding(1) var out: texture_storage_2d<rgba8unorm, write>;
@compute @workgroup_size(1) fn main() { textureStore(out, vec2i(0), vec4f(f32(x[0]))); }`,
    "unbindable",
    "@group(0) @binding(1) var out: texture_storage_2d<rgba8unorm, write>",
    /not storage textures/,
    /var<storage/,
  );
});

Deno.test("defineKernel() refuses a private var with a binding, a buffer without @group, and an unknown access mode", () => {
  const body = "@compute @workgroup_size(1) fn main() { x[0] = y; }";
  refused(
    `${X}\n@group(0) @binding(1) var<private> y: u32;\n${body}`,
    "unbindable",
    "@group(0) @binding(1) var<private> y: u32",
    /only var<storage> and var<uniform> take @group and @binding/,
    /Remove the @group and @binding/,
  );
  refused(
    `${X}\n@binding(1) var<uniform> y: u32;\n${body}`,
    "unbindable",
    "@binding(1) var<uniform> y: u32",
    /needs both @group and @binding.*no @group/,
    /@group\(0\) @binding\(0\)/,
  );
  refused(
    `${X}\n@group(0) @binding(1) var<storage, write> y: u32;\n${body}`,
    "unbindable",
    "@group(0) @binding(1) var<storage, write> y: u32",
    /read or read_write, not write/,
    /var<storage, read>/,
  );
});

Deno.test("defineKernel() refuses two buffers the entry point uses at one (group, binding)", () => {
  refused(
    `@group(1) @binding(0) var<storage, read_write> a: array<u32>;
const ZERO = 0u;
@binding(ZERO) @group(1) var<uniform> b: vec4u;
@compute @workgroup_size(1) fn main() { a[0] = b.x; }`,
    "duplicate",
    "@binding(ZERO) @group(1) var<uniform> b: vec4u",
    /@group\(1\) @binding\(0\) is also declared by var "a"/,
    /another @binding/,
  );
});

Deno.test("resources the entry point does not use are left alone, and take no launch argument", async () => {
  // A render+compute module: the fragment shader's texture and sampler are not the compute pipeline's.
  const mixed = defineKernel({
    name: "mixed",
    wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var tex: texture_2d<f32>;
@group(0) @binding(2) var samp: sampler;
@group(1) @binding(0) var<uniform> tint: vec4f;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4f { return vec4f(f32(i)); }
@fragment fn fs() -> @location(0) vec4f { return textureSample(tex, samp, vec2f(0.5)) * tint; }`,
  });
  assert.deepEqual(mixed.layout.bindingNames, ["x"]);
  // Two declarations at one place, one never used: the used one takes it.
  const aliased = defineKernel({
    name: "aliased",
    wgsl: `
@group(0) @binding(0) var<storage, read_write> unused: array<f32>;
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 10u; }`,
  });
  assert.deepEqual(aliased.layout.bindingNames, ["x"]);
  // An unused texture in a module of one entry point is not refused either.
  const single = defineKernel({
    name: "single",
    wgsl: `${X}\n@group(0) @binding(1) var tex: texture_2d<f32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 100u; }`,
  });
  assert.deepEqual(single.layout.bindingNames, ["x"]);
  await withClient(async (client) => {
    const x = client.create(new Uint32Array([0]));
    client.launch(mixed, [1], [x]);
    client.launch(aliased, [1], [x]);
    client.launch(single, [1], [x]);
    assert.deepEqual([...await readU32(client, x)], [111]);
  });
});
