/**
 * Replays the conformance corpus (`tests/conformance/`) on raw WebGPU, with
 * the client's own binding types, and compares each dispatch with the
 * captured after-bytes, exactly and with the dispatch's tolerance. On the
 * capture's adapter every dispatch is exact (the capture checked it); on
 * another GPU it shows which differences come from the device itself, so a
 * failure of `tests/conformance/conformance_test.ts` there can be told apart
 * from one of the runtime.
 *
 *   deno run --allow-read --allow-env bench/conformance_raw.ts
 * Environment: VERBOSE=1 prints every dispatch that is not exact.
 *
 * @module
 */

import { readCorpus } from "../tests/conformance/_corpus.ts";
import { compareDispatch } from "../tests/conformance/_compare.ts";
import { replayRaw } from "./_raw_replay.ts";

const corpus = await readCorpus();
const adapter = await navigator.gpu.requestAdapter();
if (adapter === null) throw new Error("no WebGPU adapter");
const wanted = [...new Set(corpus.index.dispatches.flatMap((d) => d.features))] as GPUFeatureName[];
const have = wanted.filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({ requiredFeatures: have });
const verbose = Deno.permissions.querySync({ name: "env", variable: "VERBOSE" }).state === "granted" &&
  Deno.env.get("VERBOSE") === "1";
const counts = { exact: 0, tolerance: 0, differs: 0, skipped: 0 };
const worst = new Map<string, number>();
for (const d of corpus.index.dispatches) {
  if (!d.features.every((f) => have.includes(f as GPUFeatureName))) {
    counts.skipped++;
    continue;
  }
  const after = await replayRaw(device, corpus, d);
  const expected = d.bindings.map((b) => corpus.blob(b.after));
  const exact = compareDispatch(d.bindings, after, expected, undefined);
  const v = exact.kind === "exact" ? exact : compareDispatch(d.bindings, after, expected, d.tolerance);
  counts[v.kind]++;
  if (v.kind === "tolerance") worst.set(d.op, Math.max(worst.get(d.op) ?? 0, v.worstUlps));
  if (verbose && exact.kind !== "exact") {
    const what = v.kind === "differs" ? v.what : v.kind === "tolerance" ? `${v.worstUlps} ULP at worst` : "";
    console.log(`${d.id} (${d.program}): ${v.kind} ${what}`);
  }
}
device.destroy();
console.log(
  `${adapter.info.description} (capture: ${corpus.index.source.adapter}): ${corpus.index.dispatches.length} ` +
    `dispatches, ${counts.exact} exact, ${counts.tolerance} within tolerance, ${counts.differs} differ, ` +
    `${counts.skipped} skipped (feature missing)`,
);
if (worst.size > 0) console.log(`worst ULP within tolerance, by op: ${JSON.stringify(Object.fromEntries(worst))}`);
