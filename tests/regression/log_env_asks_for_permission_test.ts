/**
 * Found by a newcomer: `createClient()` under `deno run` in a terminal, with
 * no flags, stopped at a prompt asking for env access to `DENOGPU_LOG`,
 * because building the logger called `Deno.env.get` whatever the permission
 * state (a read without permission prompts in a terminal; elsewhere it throws,
 * which the runtime caught). The variable is now read only when env access to
 * it is already granted, so the core needs no permission at all.
 */

import assert from "node:assert/strict";
import { ServerLogger } from "../../server.ts";
import { readGrantedEnv } from "../../src/_util/granted_env.ts";

/** Runs `fn` while counting calls to `Deno.env.get`. */
function countingEnvReads(fn: () => void): number {
  const env = Deno.env as { get: typeof Deno.env.get };
  const get = env.get;
  let calls = 0;
  env.get = (key: string) => {
    calls++;
    return get.call(Deno.env, key);
  };
  try {
    fn();
  } finally {
    env.get = get;
  }
  return calls;
}

Deno.test({
  name: "a logger built without env permission never reads DENOGPU_LOG (a read would prompt in a terminal)",
  permissions: { env: false },
  fn() {
    const calls = countingEnvReads(() => assert.equal(ServerLogger.fromEnv().enabled, false));
    assert.equal(calls, 0);
  },
});

Deno.test({
  name: "readGrantedEnv reads a variable once env access to it is granted, and only then",
  permissions: { env: ["DENOGPU_TEST_GRANTED"] },
  fn() {
    Deno.env.set("DENOGPU_TEST_GRANTED", "yes");
    try {
      assert.equal(readGrantedEnv("DENOGPU_TEST_GRANTED"), "yes");
      assert.equal(countingEnvReads(() => assert.equal(readGrantedEnv("HOME"), undefined)), 0);
    } finally {
      Deno.env.delete("DENOGPU_TEST_GRANTED");
    }
  },
});
