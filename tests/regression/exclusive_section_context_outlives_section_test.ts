/**
 * Found by auditing the exclusive lock: a call is "nested" (runs at once) when
 * its async context was created inside a section, but that context outlives
 * the section. A timer or promise callback scheduled inside a section that
 * calls `exclusive` after the section ended ran at once, without the lock,
 * alongside the section that held it by then.
 */

import assert from "node:assert/strict";
import { createClient } from "../../mod.ts";

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

Deno.test("exclusive called from a callback scheduled inside an ended section waits for the lock", async () => {
  const client = await createClient();
  try {
    const order: string[] = [];
    let late: Promise<unknown> | null = null;
    let holder!: () => void;
    const holding = new Promise<void>((resolve) => (holder = resolve));
    await client.exclusive(() => {
      setTimeout(() => {
        late = client.exclusive(() => order.push("late"));
      }, 20);
    });
    // Another section takes the lock before the callback runs, and holds it past it.
    const other = client.exclusive(async () => {
      order.push("other start");
      await holding;
      order.push("other end");
    });
    await delay(60);
    assert.ok(late !== null, "the callback ran");
    holder();
    await other;
    await late;
    assert.deepEqual(order, ["other start", "other end", "late"]);
  } finally {
    client.destroy();
  }
});

Deno.test("exclusive nested inside a running section still runs at once", async () => {
  const client = await createClient();
  try {
    const order: string[] = [];
    await client.exclusive(async () => {
      await delay(1);
      await client.exclusive(async () => {
        await delay(1);
        await client.exclusive(() => order.push("innermost"));
        order.push("inner");
      });
      order.push("outer");
    });
    assert.deepEqual(order, ["innermost", "inner", "outer"]);
  } finally {
    client.destroy();
  }
});
