/**
 * Contract under test: a buffer's struct is read at the byte offsets the WGSL
 * memory layout rules give, whatever the address space it is declared in and
 * however it is bound: `var<storage>` and `var<uniform>` bound to a handle,
 * and a `var<uniform>` taking info words. The probe structs carry `@align`
 * and `@size` members, nested structs, a `vec3` followed by a scalar, and
 * arrays; each expected offset is written out by hand from the rules.
 *
 * Found by replaying tfjs-webgpu's shaders: Deno 2.9.6's GL backend ignores
 * `@align` and `@size` and lays storage out by std430, so `@align(16) xShape :
 * vec5` sat at byte 4 once the runtime bound the uniform as storage. The
 * probe runs on the adapter the tests get and, where one exists, again
 * through GL in a child process.
 */

import assert from "node:assert/strict";
import { type ComputeClient, createClient, defineKernel } from "../../mod.ts";

/** A probe: declarations, the struct bound, the fields read, and their offsets by the WGSL rules. */
interface Probe {
  readonly name: string;
  readonly decls: string;
  readonly type: string;
  readonly fields: readonly string[];
  readonly offsets: readonly number[];
  /** False when the struct is not valid in the uniform address space. */
  readonly uniform: boolean;
}

/** The probes, with their offsets by the WGSL rules. */
export const PROBES: readonly Probe[] = [
  {
    name: "tfjs-webgpu's shape uniforms: @align(16) members of a five-i32 struct",
    decls: "struct vec5 { x: i32, y: i32, z: i32, w: i32, u: i32 }\n" +
      "struct Uniforms { NAN: f32, @align(16) xShape: vec5, @align(16) outShape: vec5, pads: vec3<i32>, filterDims: vec3<i32> }",
    type: "Uniforms",
    fields: ["NAN", "xShape.x", "xShape.u", "outShape.x", "outShape.u", "pads.x", "pads.z", "filterDims.x"],
    // vec5 is 20 B (align 4); @align(16) puts xShape at 16, outShape at roundUp(16, 36) = 48; vec3 aligns to 16.
    offsets: [0, 16, 32, 48, 64, 80, 88, 96],
    uniform: true,
  },
  {
    name: "@align and @size on scalar members",
    decls: "struct P { x: u32, @align(16) y: u32, @size(12) z: u32, @align(32) @size(20) w: u32, v: u32 }",
    type: "P",
    fields: ["x", "y", "z", "w", "v"],
    // y at 16; z at 20 and takes 12 B; w at roundUp(32, 32) = 32 and takes 20 B; v at 52.
    offsets: [0, 16, 20, 32, 52],
    uniform: true,
  },
  {
    name: "a struct aligned by one of its members, nested, and one after it",
    decls: "struct S { @align(16) a: u32, b: u32 }\nstruct P { x: u32, s: S, y: u32, @align(16) t: S }",
    type: "P",
    fields: ["x", "s.a", "s.b", "y", "t.a", "t.b"],
    // S: align 16, size 16. s at 16; y at 32; t at 48.
    offsets: [0, 16, 20, 32, 48, 52],
    uniform: true,
  },
  {
    name: "a vec3 followed by a scalar, a vec2, and an array of vec4",
    decls: "struct P { a: vec3u, b: u32, c: vec2u, d: array<vec4u, 2>, e: u32 }",
    type: "P",
    fields: ["a.x", "a.z", "b", "c.x", "c.y", "d[0].x", "d[1].w", "e"],
    // vec3 takes 12 B at 0, b packs into byte 12; c at 16; d at 32 (stride 16); e at 64.
    offsets: [0, 8, 12, 16, 20, 32, 60, 64],
    uniform: true,
  },
  {
    name: "an array of structs with an @align(16) member, and one of @size(8) scalars",
    decls:
      "struct E { @align(16) v: u32 }\nstruct Q { @size(8) v: u32 }\nstruct P { a: u32, b: array<E, 2>, c: array<Q, 3>, d: u32 }",
    type: "P",
    fields: ["a", "b[0].v", "b[1].v", "c[0].v", "c[2].v", "d"],
    // E: align 16, size 16, so b at 16 with stride 16; Q: 8 B, so c at 48 with stride 8; d at 72.
    offsets: [0, 16, 32, 48, 64, 72],
    uniform: false, // an array of Q has a stride of 8, not a multiple of 16
  },
];

/** WGSL of a kernel that writes, for each field, its first word as read through `s`. */
function probeWgsl(p: Probe, space: string, sBinding: number): string {
  const body = p.fields.map((f, i) => `out[${i}] = bitcast<u32>(s.${f});`).join("\n  ");
  const out = `@group(0) @binding(${1 - sBinding}) var<storage, read_write> out: array<u32>;`;
  const s = `@group(0) @binding(${sBinding}) ${space} s: ${p.type};`;
  return `${p.decls}\n${out}\n${s}\n@compute @workgroup_size(1) fn main() {\n  ${body}\n}`;
}

/** Every word holds its own byte offset: a field read back tells where it sits. */
const marked = Uint32Array.from({ length: 64 }, (_, i) => i * 4);

/**
 * Runs every probe in every way of binding it; returns one line per mismatch.
 *
 * @returns The mismatches (empty when every field sits where WGSL says).
 */
export async function runProbes(client?: ComputeClient): Promise<string[]> {
  await using owned = client === undefined ? await createClient() : null;
  client ??= owned!;
  const wrong: string[] = [];
  for (const p of PROBES) {
    const ways: [string, string, "handle" | "info"][] = [
      ["storage (a handle)", "var<storage, read>", "handle"],
      ["storage (info words)", "var<storage, read>", "info"],
    ];
    if (p.uniform) {
      ways.push(["uniform (a handle)", "var<uniform>", "handle"], ["uniform (info words)", "var<uniform>", "info"]);
    }
    for (const [way, space, as] of ways) {
      const kernel = defineKernel({ name: "layout-probe", wgsl: probeWgsl(p, space, 1) });
      const out = client.empty(p.fields.length * 4);
      if (as === "handle") client.launch(kernel, [1], [out, client.create(marked)]);
      else client.launch(kernel, [1], [out], marked);
      const got = [...await client.read(out, Uint32Array)];
      if (got.join() !== p.offsets.join()) wrong.push(`${p.name}, ${way}: offsets ${got} (WGSL: ${p.offsets})`);
    }
  }
  return wrong;
}

Deno.test("every probe struct is read at the offsets the WGSL layout rules give, bound as storage or as a uniform, from a handle or info words", async () => {
  assert.deepEqual(await runProbes(), []);
});

Deno.test("a kernel knows the fewest bytes each binding takes by its WGSL type", () => {
  const k = defineKernel({ name: "sizes", wgsl: probeWgsl(PROBES[0]!, "var<uniform>", 1) });
  assert.deepEqual(k.layout.bindingKinds, ["storage", "uniform"]);
  // out: a runtime-sized array counts one element; Uniforms: 96 + 12 = 108, rounded to its alignment 16.
  assert.deepEqual(k.layout.bindingSizes, [4, 112]);
});

Deno.test("through the GL backend too (a child process), every probe struct is read at its WGSL offsets", async () => {
  // The child prints one verdict line: the probes' mistakes, or why GL cannot run them here (no GL adapter, or no
  // device from it: NVIDIA's EGL without a display, say). Anything else is a failure, shown with its stderr.
  const program = `import { runProbes } from ${JSON.stringify(import.meta.url)};
import { createClient } from ${JSON.stringify(new URL("../../mod.ts", import.meta.url).href)};
let client;
try {
  if ((await navigator.gpu.requestAdapter()) === null) throw new Error("no GL adapter");
  client = await createClient();
} catch (e) {
  console.log(JSON.stringify({ unavailable: String(e?.message ?? e) }));
}
if (client !== undefined) console.log(JSON.stringify({ wrong: await runProbes(client) }));`;
  const dir = await Deno.makeTempDir({ prefix: "denogpu-layout-gl-" });
  try {
    await Deno.writeTextFile(`${dir}/probe.ts`, program);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-check", "--allow-read", "--allow-env", `${dir}/probe.ts`],
      env: { DENO_WEBGPU_BACKEND: "gl", NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    const err = new TextDecoder().decode(out.stderr);
    const last = text.split("\n").at(-1)!;
    // The child may abort at exit on GL (libglvnd's EGL teardown, see CONTRIBUTING.md); its verdict is the line it printed.
    assert.ok(last.startsWith("{"), `the GL child printed no verdict (exit ${out.code}): ${text}\n${err}`);
    const verdict = JSON.parse(last) as { wrong?: string[]; unavailable?: string };
    if (verdict.unavailable !== undefined) {
      console.log(`GL cannot run the probes here: ${verdict.unavailable}`);
      return;
    }
    assert.deepEqual(verdict.wrong, [], err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
