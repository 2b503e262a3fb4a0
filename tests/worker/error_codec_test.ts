/**
 * Contract under test: an error crossing from the worker is the same error
 * on the main thread: its class (the runtime's and JavaScript's), message,
 * fields, cause and nested errors, after structured cloning.
 */

import assert from "node:assert/strict";
import {
  CompilationError,
  DeviceLostError,
  IoError,
  ProfileError,
  ResourceLimitError,
  ServerError,
  ServerUnhealthyError,
} from "../../mod.ts";
import { encodeError, encodeValue, reviveError, reviveValue } from "../../src/worker/wire/error_codec.ts";

/** Encodes, clones as postMessage would, and revives. */
function cross(e: unknown): Error {
  return reviveError(structuredClone(encodeError(e)));
}

Deno.test("a ServerUnhealthyError crosses with its stream, its queued errors and their classes and fields", () => {
  const compile = new CompilationError("broken", "cannot assign f32 to u32");
  const limit = new ResourceLimitError("cube-count", "launch(k)", [70000, 1, 1], [65535, 65535, 65535], "max");
  const io = new IoError("not-found", "memory 7 was released", { size: 16 });
  const e = new ServerUnhealthyError(3, [compile, limit, io]);
  const back = cross(e);
  assert.ok(back instanceof ServerUnhealthyError && back instanceof ServerError && back instanceof Error);
  assert.equal(back.message, e.message);
  assert.equal(back.name, "ServerUnhealthyError");
  assert.equal(back.stream, 3);
  assert.equal(back.errors.length, 3);
  const [c, l, i] = back.errors;
  assert.ok(c instanceof CompilationError);
  assert.equal(c.kernel, "broken");
  assert.equal(c.compilerMessage, compile.compilerMessage);
  assert.ok(l instanceof ResourceLimitError);
  assert.deepEqual([l.limit, l.requested, l.max], ["cube-count", [70000, 1, 1], [65535, 65535, 65535]]);
  assert.ok(i instanceof IoError);
  assert.deepEqual([i.kind, i.size], ["not-found", 16]);
  assert.ok(back.cause instanceof CompilationError, "the cause is the first queued error");
  assert.equal(back.stack, e.stack);
});

Deno.test("built-in errors, kinds and reasons cross as themselves", () => {
  assert.ok(cross(new TypeError("t")) instanceof TypeError);
  const r = cross(new RangeError("size must be..."));
  assert.ok(r instanceof RangeError);
  assert.equal(r.message, "size must be...");
  const lost = cross(new DeviceLostError("gone", { reason: "destroyed" }));
  assert.ok(lost instanceof DeviceLostError);
  assert.equal((lost as DeviceLostError).reason, "destroyed");
  const p = cross(new ProfileError("not-registered", "token 3"));
  assert.ok(p instanceof ProfileError);
  assert.equal((p as ProfileError).kind, "not-registered");
});

Deno.test("an unknown subclass crosses as its nearest known class; a thrown non-error as an Error", () => {
  class Mine extends RangeError {}
  const m = cross(new Mine("mine"));
  assert.ok(m instanceof RangeError);
  assert.equal(m.message, "mine");
  const s = cross("just a string");
  assert.ok(s instanceof Error);
  assert.equal(s.message, "just a string");
});

Deno.test("values with errors, functions and promises inside cross as data, errors revived", () => {
  const value = { ok: false, error: new TypeError("x"), fn: () => 1, p: Promise.resolve(1), list: [1, new Error("y")] };
  const back = reviveValue(structuredClone(encodeValue(value))) as Record<string, unknown>;
  assert.ok(back.error instanceof TypeError);
  assert.equal(back.fn, undefined);
  assert.equal(back.p, undefined);
  assert.ok((back.list as unknown[])[1] instanceof Error);
});
