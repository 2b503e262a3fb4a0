/**
 * A tuning in its own process, for the persistence tests: tunes the set
 * `persist-demo` for key 1 with a scripted device and prints what ran as one
 * JSON line: `{ source, calls, rounds, output }`.
 *
 * Usage: deno run --allow-read --allow-write _tune_process.ts <store> [key] [delayMs]
 *   <store>: a JSON file path, or `local-storage:<prefix>`.
 */

import { defineTunableSet } from "../../mod.ts";
import { jsonFileTuneStore, localStorageTuneStore, Tuner } from "../../tune.ts";
import { scripted } from "./_scripted.ts";

const [where = "", key = "1", delay = "0"] = Deno.args;
const store = where.startsWith("local-storage:")
  ? localStorageTuneStore({ prefix: where.slice("local-storage:".length) })
  : jsonFileTuneStore(where);
const dev = scripted({ a: 3e6, b: 1e6, c: 2e6 });
const slow = dev.measurer;
const measurer = {
  method: slow.method,
  async round(runs: readonly (() => unknown)[]) {
    await new Promise((r) => setTimeout(r, Number(delay)));
    return slow.round(runs);
  },
};
const set = defineTunableSet({
  name: "persist-demo",
  key: (n: number) => ({ n }),
  candidates: ["a", "b", "c"].map((n) => dev.candidate(n, { source: `kernel ${n}` })),
});
const tuner = new Tuner({ measurer, store, device: "test-device" });
const output = await tuner.tune(set, Number(key));
const d = tuner.decision(set, Number(key))!;
console.log(JSON.stringify({ source: d.source, calls: dev.calls, rounds: dev.rounds, output }));
