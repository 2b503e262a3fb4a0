/**
 * Operations that must fail: invalid calls that throw (or reject) at once and
 * change nothing, and failures queued for the next flush of the stream (a
 * kernel that does not compile, a replay of a destroyed graph, a write inside
 * a capture), which must leave the stream usable.
 */

import assert from "node:assert/strict";
import { CompilationError, GraphStateError, ResourceLimitError, ServerUnhealthyError } from "../../mod.ts";
import { affineKernel, incKernel } from "../_gpu.ts";
import { expectReject, expectThrow, expectUnhealthy } from "./_expect.ts";
import { brokenKernel, xorKernel } from "./_kernels.ts";
import { launchOn, makeLaunch } from "./_launches.ts";
import { drain } from "./_ops_read.ts";
import type { ModelState } from "./_state.ts";

/** Invalid calls: each must fail at once with a clear error and change nothing. */
export async function doInvalid(st: ModelState): Promise<void> {
  const { int, chance, pick } = st.rand;
  const dead = st.dead;
  const { c, s } = st.clientFor();
  const kind = int(9);
  if (kind === 0 && dead.length > 0) {
    st.note(`invalid: read of a released handle on s${s}`);
    await expectReject("read(released)", TypeError, c.read(pick(dead)));
  } else if (kind === 1 && dead.length > 0 && st.refs.length > 0) {
    st.note(`invalid: readMany with a released handle on s${s}`);
    await expectReject("readMany([live, released])", TypeError, c.readMany([pick(st.refs).h, pick(dead)], Uint8Array));
  } else if (kind === 2 && dead.length > 0) {
    st.note(`invalid: write of a released handle on s${s}`);
    const h = pick(dead);
    expectThrow("write(released)", TypeError, () => c.write(h, new Uint8Array(h.sizeInUse)));
  } else if (kind === 3 && st.refs.length > 0) {
    const r = pick(st.refs);
    const size = r.len === 0 || chance(0.5) ? r.len + 1 + int(8) : int(r.len);
    st.note(`invalid: write of ${size} B into ${r.name} (${r.len} B) on s${s}`);
    expectThrow("write(wrong size)", RangeError, () => c.write(r.h, new Uint8Array(size)));
  } else if (kind === 4) {
    const all = st.launchableRefs(1);
    if (all.length === 0) return;
    const x = pick(all);
    st.note(`invalid: launch with the wrong number of buffers on s${s}`);
    expectThrow("launch(inc, 2 buffers)", TypeError, () => c.launch(incKernel, [1], [x.h, x.h]));
    expectThrow("launch(affine, 1 buffer)", TypeError, () => c.launch(affineKernel, [1], [x.h], new Uint32Array(3)));
    expectThrow("launch(xor, no info)", TypeError, () => c.launch(xorKernel, [1], [x.h, x.h, x.h]));
  } else if (kind === 5 && dead.length > 0) {
    st.note(`invalid: launch with a released handle on s${s}`);
    const h = pick(dead);
    expectThrow("launch(inc, released)", TypeError, () => c.launch(incKernel, [1], [h]));
  } else if (kind === 6 && dead.length > 0) {
    st.note(`invalid: clone and view of a released handle, and a second release`);
    const h = pick(dead);
    expectThrow("clone(released)", TypeError, () => h.clone());
    expectThrow("view(released)", TypeError, () => h.view(0, 0));
    h.release(); // a no-op
  } else if (kind === 7 && st.destroyedGraphs.length > 0) {
    st.note(`invalid: destroy a destroyed graph again`);
    pick(st.destroyedGraphs).destroy(); // a no-op
  } else if (kind === 8) {
    st.note(`invalid: launch with a count above the device limit on s${s}`);
    const all = st.launchableRefs(1);
    if (all.length === 0) return;
    const max = c.properties.hardware.maxCubeCount[0];
    expectThrow("launch(count > max)", ResourceLimitError, () => c.launch(incKernel, [max + 1], [pick(all).h]));
    expectThrow("launch(count -1)", RangeError, () => c.launch(incKernel, [-1], [pick(all).h]));
  }
}

/** Failures that are queued and raised by the next flush of the stream (and must leave it usable). */
export async function doQueuedError(st: ModelState): Promise<void> {
  const { int, chance, pick, randomBytes } = st.rand;
  const kind = int(3);
  if (kind === 0 && st.destroyedGraphs.length > 0) {
    const g = pick(st.destroyedGraphs);
    st.note(`queued error: replay a destroyed graph (s${g.stream}), then flush`);
    await drain(st); // a queued error fails the next draining call on the stream, pending reads included
    g.replay();
    await expectUnhealthy("flush after replaying a destroyed graph", GraphStateError, st.clients[g.stream]!.flush());
  } else if (kind === 1) {
    const { c, s } = st.clientFor();
    const slots = st.base.server.settings.maxStreams;
    const all = st.launchableRefs(1).filter((r) => !st.avoid.has("broken-cross") || r.mem.stream % slots === s % slots);
    if (all.length === 0) return;
    const before = chance(0.5) ? makeLaunch(st, false) : null;
    const after = chance(0.5) ? makeLaunch(st, false) : null;
    const x = pick(all);
    const tag = st.nextK++;
    st.note(
      `queued error: s${s} ${before?.text ?? "-"}; broken-${tag} (${x.name}); ${after?.text ?? "-"}; then flush`,
    );
    await drain(st);
    if (before) {
      launchOn(st, c, before);
      before.apply();
    }
    c.launch(brokenKernel(tag), [1], [x.h]);
    if (after) {
      launchOn(st, c, after);
      after.apply();
    }
    await expectUnhealthy("flush after launching a kernel that does not compile", CompilationError, c.flush());
  } else {
    // A write inside the capture window fails the capture; the warm-up still ran once.
    const all = st.launchableRefs(1);
    if (all.length === 0) return;
    const spec = makeLaunch(st, false);
    const candidates = st.writable();
    if (spec === null || candidates.length === 0) return;
    const r = pick(candidates);
    const s = st.current;
    const c = st.clients[s]!;
    const data = randomBytes(r.len);
    st.note(`queued error: capture s${s} with ${spec.text} and a write into ${r.name}`);
    await drain(st);
    let failed: unknown = null;
    try {
      const g = await c.capture(() => {
        launchOn(st, c, spec);
        c.write(r.h, data);
      });
      g.destroy();
    } catch (e) {
      failed = e;
    }
    assert.ok(
      failed instanceof ServerUnhealthyError || failed instanceof GraphStateError,
      `a capture with a write must fail with a GraphStateError, got ${String(failed)}`,
    );
    spec.apply();
    r.mem.bytes.set(data, r.off);
    r.mem.def.fill(1, r.off, r.off + r.len);
  }
}
