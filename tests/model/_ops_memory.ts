/**
 * Operations on handles and their memory: create (from every kind of host
 * view, and staging memory), empty, write, clone, view, release (also right
 * after use, while the work using the handle is still queued) and
 * memoryCleanup.
 */

import assert from "node:assert/strict";
import type { ModelState, Ref } from "./_state.ts";

/** Creates a handle from random host data, passed as any kind of host view. */
export function doCreate(st: ModelState): void {
  const { random, randomBytes, randomSize } = st.rand;
  const { c, s } = st.clientFor();
  const size = randomSize();
  const data = randomBytes(size);
  const m = st.newMem(s, size);
  m.bytes.set(data);
  m.def.fill(1);
  // Any host view type: a Uint8Array, a Uint32Array, a DataView inside a larger buffer, an ArrayBuffer.
  let arg: ArrayBufferView | ArrayBuffer = data;
  let kind = "u8";
  const r = random();
  if (size % 4 === 0 && r < 0.3) {
    arg = new Uint32Array(data.slice().buffer);
    kind = "u32";
  } else if (r < 0.45) {
    const big = new Uint8Array(size + 8);
    big.set(data, 4);
    arg = new DataView(big.buffer, 4, size);
    kind = "dataview";
  } else if (r < 0.6) {
    arg = data.slice().buffer;
    kind = "arraybuffer";
  } else if (r < 0.7) {
    arg = c.staging([size])[0]!;
    (arg as Uint8Array).set(data);
    kind = "staging";
  }
  const name = `h${st.nextRef}`;
  st.note(`create s${s} ${name} (${size} B, ${kind})`);
  const h = c.create(arg);
  data.fill(0xee); // the runtime must have taken its copy already
  if (kind === "staging") assert.equal((arg as Uint8Array).byteLength, 0, "a staging view is detached once used");
  st.addRef(h, m, 0, size);
}

/** Allocates a handle whose bytes are undefined until written. */
export function doEmpty(st: ModelState): void {
  const { c, s } = st.clientFor();
  const size = st.rand.randomSize();
  st.note(`empty s${s} h${st.nextRef} (${size} B)`);
  const h = c.empty(size);
  st.addRef(h, st.newMem(s, size), 0, size);
}

/** Writes random bytes into a handle (sometimes from staging memory). */
export function doWrite(st: ModelState): void {
  const { chance, pick, randomBytes } = st.rand;
  const candidates = st.writable();
  if (candidates.length === 0) return doCreate(st);
  const r = pick(candidates);
  const { c, s } = st.clientFor();
  const data = randomBytes(r.len);
  const staged = chance(0.15);
  st.note(`write s${s} ${r.name} (${r.len} B at +${r.off} of mem ${r.mem.id}${staged ? ", from staging" : ""})`);
  if (staged) {
    const view = c.staging([r.len])[0]!;
    view.set(data);
    c.write(r.h, view);
    assert.equal(view.byteLength, 0, "a staging view is detached once written");
  } else c.write(r.h, data);
  r.mem.bytes.set(data, r.off);
  r.mem.def.fill(1, r.off, r.off + r.len);
  data.fill(0xdd);
  maybeDrop(st, [r]);
}

/** Clones a handle, checking `canMut()` before and after. */
export function doClone(st: ModelState): void {
  if (st.refs.length === 0) return doCreate(st);
  const r = st.rand.pick(st.refs);
  st.note(`clone ${r.name} -> h${st.nextRef}`);
  assert.equal(r.h.canMut(), st.mutable(r.mem), `${r.name}.canMut() with ${r.mem.live} handles`);
  const h = r.h.clone();
  assert.equal(h.sizeInUse, r.len);
  assert.equal(h.canMut(), false, "canMut() of a clone");
  st.addRef(h, r.mem, r.off, r.len);
}

/** Views any byte range of a handle (empty ones too). */
export function doView(st: ModelState): void {
  const { random, int, pick } = st.rand;
  if (st.refs.length === 0) return doCreate(st);
  const r = pick(st.refs);
  let start = 4 * int(Math.floor(r.len / 4) + 1);
  let end = int(r.len - start + 1);
  const shape = random();
  if (shape < 0.2) [start, end] = [0, r.len]; // an empty view at the start of the range
  else if (shape < 0.4) end = (r.len - start) % 4; // a whole number of u32
  st.note(`view ${r.name} (+${start}, -${end}) -> h${st.nextRef} (${r.len - start - end} B)`);
  const h = r.h.view(start, end);
  assert.equal(h.sizeInUse, r.len - start - end);
  st.addRef(h, r.mem, r.off + start, r.len - start - end);
}

/**
 * Now and then the handles an operation just used are dropped at once (and
 * memory cleaned up), while the work that uses them is still queued,
 * held or unsubmitted: the runtime must keep the memory alive until then.
 */
export function maybeDrop(st: ModelState, used: readonly Ref[], p = 0.1): void {
  const { chance, pick } = st.rand;
  if (!chance(p)) return;
  const r = pick(used);
  if (!st.refs.includes(r) || (r.mem.graphRefs > 0 && r.mem.live === 1)) return;
  st.note(`release ${r.name} right after use`);
  st.releaseRef(r);
  if (chance(0.6)) cleanupNow(st);
}

/** Releases a handle, checking `canMut()` of another handle of its memory. */
export function doRelease(st: ModelState): void {
  const candidates = st.releasable();
  if (candidates.length === 0) return;
  const r = st.rand.pick(candidates);
  st.note(`release ${r.name} (mem ${r.mem.id}, ${r.mem.live - 1} other handles)`);
  st.releaseRef(r);
  const other = st.refs.find((x) => x.mem === r.mem);
  if (other) assert.equal(other.h.canMut(), st.mutable(r.mem), `${other.name}.canMut() with ${r.mem.live} handles`);
}

/** memoryCleanup at once, through any stream's client. */
export function cleanupNow(st: ModelState): void {
  if (st.avoid.has("unpinned-cleanup")) return; // only after flushing every stream (doCleanup)
  const { c, s } = st.clientFor();
  st.note(`memoryCleanup (via s${s})`);
  c.memoryCleanup();
}

/** memoryCleanup (after flushing every stream when "unpinned-cleanup" is avoided). */
export async function doCleanup(st: ModelState): Promise<void> {
  if (st.avoid.has("unpinned-cleanup")) {
    for (const c of st.clients) await c.flush();
    const { c, s } = st.clientFor();
    st.note(`memoryCleanup (via s${s}, every stream flushed first)`);
    c.memoryCleanup();
  } else cleanupNow(st);
}

/**
 * Fragments a stream's pages: creates several small handles with random
 * bytes on one stream, then releases every other one (what pools that
 * compact pack, moving the survivors while the run goes on using them).
 */
export function doFragment(st: ModelState): void {
  const { int, randomBytes } = st.rand;
  const { c, s } = st.clientFor();
  const n = 6 + int(11);
  st.note(`fragment s${s}: create ${n} handles h${st.nextRef}.., release every other one`);
  const made: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const size = 4 * (1 + int(128));
    const data = randomBytes(size);
    const m = st.newMem(s, size);
    m.bytes.set(data);
    m.def.fill(1);
    made.push(st.addRef(c.create(data), m, 0, size));
  }
  for (let i = 0; i < made.length; i += 2) st.releaseRef(made[i]!);
}
