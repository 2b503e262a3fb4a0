/**
 * Assertions on failures: a call that must throw at once, a promise that must
 * reject, and a flush that must report a queued error.
 */

import assert from "node:assert/strict";
import { ServerUnhealthyError } from "../../mod.ts";

/** What `fn` throws, or null when it returns. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

/** What `p` rejects with, or null when it resolves. */
async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return null;
}

/** Expects `fn` to throw an error of `type`, with a message, at once. */
export function expectThrow(what: string, type: new (...args: never[]) => Error, fn: () => unknown): void {
  const thrown = thrownBy(fn);
  assert.ok(thrown !== null, `${what}: expected a ${type.name}, nothing was thrown`);
  assert.ok(thrown instanceof type, `${what}: expected a ${type.name}, got ${String(thrown)}`);
  assert.ok((thrown as Error).message.length > 0, `${what}: the error has no message`);
}

/** Expects `p` to reject with an error of `type`. */
export async function expectReject(
  what: string,
  type: new (...args: never[]) => Error,
  p: Promise<unknown>,
): Promise<void> {
  const thrown = await rejectionOf(p);
  assert.ok(thrown !== null, `${what}: expected a rejection with ${type.name}, it resolved`);
  assert.ok(thrown instanceof type, `${what}: expected a ${type.name}, got ${String(thrown)}`);
}

/** Expects `p` to reject with a ServerUnhealthyError holding an error of `cause`. */
export async function expectUnhealthy(
  what: string,
  cause: new (...args: never[]) => Error,
  p: Promise<unknown>,
): Promise<void> {
  const thrown = await rejectionOf(p);
  assert.ok(
    thrown instanceof ServerUnhealthyError,
    `${what}: expected a ServerUnhealthyError, got ${String(thrown)}`,
  );
  const errors = (thrown as ServerUnhealthyError).errors;
  assert.ok(
    errors.some((e) => e instanceof cause),
    `${what}: expected a ${cause.name} among the queued errors, got ${errors.map(String).join("; ")}`,
  );
}
