/**
 * Contract under test: `launch(kernel, count, { name: handle }, info)` takes
 * its buffers by the WGSL names of the bindings (`kernel.layout.bindingNames`,
 * less the one taking the info words when they are given) and computes what
 * the positional launch computes; a name the kernel does not bind, a name
 * missing or a value that is not a handle is refused at the call with a
 * `TypeError` naming the kernel, the name and the kernel's binding names, and
 * the work queued around it runs; a named launch inside a capture replays;
 * a named launch made while another's buffers are read gets its own array.
 */

import assert from "node:assert/strict";
import { defineKernel, type Handle } from "../../mod.ts";
import { addKernel, axpbInfo, axpbKernel, incKernel, plusOneKernel, readF32, readU32, rng } from "../_gpu.ts";
import { clientTest } from "../_clients.ts";

const N = 1000;

/** Two random f32 inputs of `N` elements and their elementwise sum, rounded as the GPU rounds it. */
function inputs(seed: number): { a: Float32Array; b: Float32Array; sum: Float32Array } {
  const r = rng(seed);
  const a = Float32Array.from({ length: N }, () => r() * 200 - 100);
  const b = Float32Array.from({ length: N }, () => r() * 200 - 100);
  return { a, b, sum: a.map((v, i) => Math.fround(v + b[i]!)) };
}

/** Asserts that `f` throws a `TypeError` whose message matches every pattern. */
function throwsNaming(f: () => void, ...patterns: RegExp[]): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof TypeError, `expected a TypeError, got ${e}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

clientTest(
  "a launch by binding names in any order equals the positional launch and the CPU reference",
  async (client) => {
    const { a, b, sum } = inputs(7);
    const ha = client.create(a);
    const hb = client.create(b);
    const byPosition = client.empty(N * 4);
    const byName = client.empty(N * 4);
    assert.deepEqual(addKernel.layout.bindingNames, ["a", "b", "out", "n"]);
    client.launch(addKernel, [Math.ceil(N / 64)], [ha, hb, byPosition], new Uint32Array([N]));
    client.launch(addKernel, [Math.ceil(N / 64)], { out: byName, b: hb, a: ha }, new Uint32Array([N]));
    const [got, want] = [await readF32(client, byName), await readF32(client, byPosition)];
    assert.deepEqual(got, sum);
    assert.deepEqual(got, want);
    [ha, hb, byPosition, byName].forEach((h) => h.release());
  },
);

clientTest("named launches of several kernels with changing info words each reach their dispatch", async (client) => {
  const src = client.create(Float32Array.from({ length: 64 }, (_, i) => i));
  const outs = Array.from({ length: 8 }, () => client.empty(64 * 4));
  const plus = client.empty(64 * 4);
  outs.forEach((dst, k) => {
    client.launch(axpbKernel, [1], { dst, src }, axpbInfo(64, k, -k));
    client.launch(plusOneKernel, [1], { src, dst: plus });
  });
  for (const [k, dst] of outs.entries()) {
    const got = await readF32(client, dst);
    for (let i = 0; i < 64; i++) assert.equal(got[i], Math.fround(i * k) - k, `out ${k}[${i}]`);
  }
  assert.deepEqual([...await readF32(client, plus)], Array.from({ length: 64 }, (_, i) => i + 1));
});

clientTest("without info words the binding that would take them is a buffer, named like the others", async (client) => {
  const { a, b, sum } = inputs(8);
  const ha = client.create(a);
  const hb = client.create(b);
  const out = client.empty(N * 4);
  const n = client.create(new Uint32Array([N / 2]));
  client.launch(addKernel, [Math.ceil(N / 64)], { a: ha, b: hb, out, n });
  const got = await readF32(client, out);
  assert.deepEqual(got.subarray(0, N / 2), sum.subarray(0, N / 2));
  throwsNaming(
    () => client.launch(addKernel, [1], { a: ha, b: hb, out }),
    /launch\(add\): no buffer given for "n"/,
    /"a", "b", "out", "n"/,
    /if "n" takes info words, pass them as info/,
  );
});

clientTest(
  "an unknown, missing, info-taking or non-Handle name is refused naming it, and the work around it runs",
  async (client) => {
    const x = client.create(new Uint32Array([0, 0, 0]));
    const a = client.create(new Float32Array([1, 2]));
    const b = client.create(new Float32Array([3, 4]));
    const out = client.empty(8);
    const info = new Uint32Array([2]);
    const known =
      /the kernel's buffers by name: "a", "b", "out"; info words take "n", from its bindings \(a, b, out, n\)/;
    client.launch(incKernel, [1], { x });
    throwsNaming(
      () => client.launch(addKernel, [1], { a, b, out, c: x }, info),
      /launch\(add\): the kernel binds no buffer named "c"/,
      known,
    );
    throwsNaming(() => client.launch(addKernel, [1], { a, out }, info), /no buffer given for "b"/, known);
    throwsNaming(() => client.launch(addKernel, [1], { a, b, out, n: x }, info), /"n" takes the info words/, known);
    throwsNaming(
      () => client.launch(addKernel, [1], { a, b: new Float32Array(2) as unknown as Handle, out }, info),
      /launch\(add\): buffer "b" must be a Handle, got a Float32Array/,
    );
    throwsNaming(
      () => client.launch(addKernel, [1], { a, b: undefined as unknown as Handle, out }, info),
      /buffer "b" must be a Handle, got undefined/,
    );
    throwsNaming(
      () => client.launch(addKernel, [1], "a, b, out" as never, info),
      /launch\(add\): buffers must be an array of Handle, or an object of Handles by binding name/,
      known,
    );
    client.launch(incKernel, [1], { x });
    client.launch(addKernel, [1], { a, b, out }, info);
    assert.deepEqual([...await readU32(client, x)], [2, 2, 2], "the launches before and after the refused ones ran");
    assert.deepEqual([...await readF32(client, out)], [4, 6]);
  },
);

clientTest(
  "a named launch made while another's buffers are read (a getter) leaves both their own handles",
  async (client) => {
    const a = client.create(new Float32Array([1, 2]));
    const b = client.create(new Float32Array([3, 4]));
    const c = client.create(new Float32Array([10, 20]));
    const d = client.create(new Float32Array([30, 40]));
    const outer = client.empty(8);
    const inner = client.empty(8);
    const info = new Uint32Array([2]);
    const named = {
      a,
      b,
      get out() {
        client.launch(addKernel, [1], { a: c, b: d, out: inner }, info);
        return outer;
      },
    };
    client.launch(addKernel, [1], named, info);
    assert.deepEqual([...await readF32(client, inner)], [40, 60]);
    assert.deepEqual([...await readF32(client, outer)], [4, 6], "the outer launch kept a and b");
  },
);

clientTest("a named launch whose handle the door refuses leaves the client launching by name", async (client) => {
  const a = client.create(new Float32Array([1]));
  const b = client.create(new Float32Array([2]));
  const out = client.empty(4);
  b.release();
  assert.throws(() => client.launch(addKernel, [1], { a, b, out }, new Uint32Array([1])), /buffer 1: .*was released/);
  const c = client.create(new Float32Array([5]));
  client.launch(addKernel, [1], { a, b: c, out }, new Uint32Array([1]));
  assert.deepEqual([...await readF32(client, out)], [6]);
});

clientTest("a kernel that binds no buffer launches with no names", async (client) => {
  const none = defineKernel({
    name: "no-bindings",
    wgsl: `var<workgroup> w: u32;
@compute @workgroup_size(1) fn main() { w = 1u; }`,
  });
  assert.deepEqual(none.layout.bindingNames, []);
  client.launch(none, [1], {});
  throwsNaming(() => client.launch(none, [1], { x: client.empty(4) }), /binds no buffer named "x"/, /by name: none/);
  await client.sync();
});

clientTest("named launches captured in a graph replay as the positional ones do", async (client) => {
  const state = client.create(new Float32Array([1, 2, 3, 4]));
  const scratch = client.empty(16);
  const graph = await client.capture(() => {
    client.launch(plusOneKernel, [1], { src: state, dst: scratch });
    client.launch(plusOneKernel, [1], { dst: state, src: scratch });
  });
  assert.deepEqual([...await readF32(client, state)], [3, 4, 5, 6], "the warm-up ran once");
  for (let i = 0; i < 5; i++) graph.replay();
  assert.deepEqual([...await readF32(client, state)], [13, 14, 15, 16]);
  graph.destroy();
});
