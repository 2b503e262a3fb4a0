/**
 * `SharedBuffers`: the shared memory all-reduces among worker clients read
 * their sources into, reused once nothing holds it.
 */

import assert from "node:assert/strict";
import { SharedBuffers } from "../../src/worker/link/shared_buffers.ts";

Deno.test("SharedBuffers.take() reuses a released buffer of the same size, and only of the same size", () => {
  const pool = new SharedBuffers();
  const a = pool.take(1024);
  assert.equal(a.byteLength, 1024);
  pool.release(a);
  assert.equal(pool.freeBytes, 1024);
  assert.notEqual(pool.take(2048), a);
  assert.equal(pool.take(1024), a);
  assert.equal(pool.freeBytes, 0);
});

Deno.test("SharedBuffers: a buffer held more than once is free only after its last release", () => {
  const pool = new SharedBuffers();
  const a = pool.take(512);
  assert.equal(pool.hold(a), true);
  pool.hold(a);
  pool.release(a);
  pool.release(a);
  assert.equal(pool.freeBytes, 0);
  assert.notEqual(pool.take(512), a, "still held: a fresh buffer");
  pool.release(a);
  assert.equal(pool.freeBytes, 512);
  assert.equal(pool.take(512), a);
});

Deno.test("SharedBuffers: a forgotten buffer is never reused, and buffers it never gave are ignored", () => {
  const pool = new SharedBuffers();
  const a = pool.take(256);
  pool.hold(a);
  pool.forget(a);
  pool.release(a);
  pool.release(a);
  assert.equal(pool.freeBytes, 0);
  const other = new SharedArrayBuffer(256);
  assert.equal(pool.hold(other), false, "a buffer the pool never gave is not held");
  pool.release(other);
  assert.equal(pool.freeBytes, 0);
  assert.notEqual(pool.take(256), a);
});

Deno.test("SharedBuffers keeps at most its limit of free bytes, and clear() lets them all go", () => {
  const pool = new SharedBuffers(1000);
  const [a, b, c] = [pool.take(400), pool.take(400), pool.take(400)];
  pool.release(a);
  pool.release(b);
  pool.release(c); // would make 1,200 B free: let go
  assert.equal(pool.freeBytes, 800);
  assert.notEqual(pool.take(400), c);
  pool.clear();
  assert.equal(pool.freeBytes, 0);
  const d = pool.take(400);
  assert.ok(d !== a && d !== b);
});
