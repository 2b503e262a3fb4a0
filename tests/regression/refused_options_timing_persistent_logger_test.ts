/**
 * Found by auditing `createClient`'s option checks: `tasksMax`, `maxStreams`
 * and `openPassAhead` were checked, but `timing`, `persistentMemory` and the
 * `logger` levels and sink were taken as given. `timing: "sytem"` silently
 * timed on the device, `persistentMemory: "off"` silently kept persistent
 * mode enabled, `logger: { memory: "verbose" }` logged at `basic`, and a
 * `sink` that is neither a stream name nor `{ file }` lost every line.
 */

import assert from "node:assert/strict";
import { type ClientOptions, createClient } from "../../mod.ts";

const refused: [string, ClientOptions][] = [
  ["timing", { timing: "sytem" as "system" }],
  ["persistentMemory", { persistentMemory: "off" as "disabled" }],
  ["logger", { logger: 1 as unknown as ClientOptions["logger"] }],
  ["logger.memory", { logger: { memory: "verbose" as "full" } }],
  ["logger.profiling", { logger: { profiling: true as unknown as "basic" } }],
  ["logger.sink", { logger: { sink: "/tmp/gpu.log" as "stderr" } }],
  ["logger.sink.file", { logger: { sink: { file: 7 as unknown as string } } }],
];

for (const [name, options] of refused) {
  Deno.test(`createClient refuses an invalid ${name} with a TypeError naming it`, async () => {
    await assert.rejects(() => createClient(options), (e: unknown) => {
      assert.ok(e instanceof TypeError, `${name}: ${e}`);
      assert.match(e.message, new RegExp(`createClient: ${name.replace(".", "\\.")}`));
      return true;
    });
  });
}

Deno.test("createClient accepts every valid timing, persistentMemory and logger value", async () => {
  const accepted: ClientOptions[] = [
    { timing: "system" },
    { timing: "device" },
    { persistentMemory: "size-match" },
    { persistentMemory: "enforced" },
    { logger: { compilation: "disabled", memory: "full", launches: "basic", profiling: "medium", sink: "stdout" } },
    { logger: { sink: { file: "/dev/null", append: false } } },
    { logger: {} },
  ];
  for (const options of accepted) (await createClient(options)).destroy();
});
