/**
 * Contract under test: the one warning about `DENO_WEBGPU_BACKEND` (see
 * `src/worker/link/backend_advice.ts`). A process with several worker clients
 * on Linux whose backend variable is readable and unset is told, once, to set
 * it to `vulkan`; one worker client, a variable that is set, one that may not
 * be read without asking, and other systems get nothing.
 */

import assert from "node:assert/strict";
import { BACKEND_ADVICE, BackendAdvice, type BackendProbe } from "../../src/worker/link/backend_advice.ts";

function probe(os: string, backend: string | undefined | null): BackendProbe & { warnings: string[] } {
  const warnings: string[] = [];
  return { os, backend: () => backend, warn: (m) => warnings.push(m), warnings };
}

Deno.test("BackendAdvice warns once, at the second worker client, on Linux with DENO_WEBGPU_BACKEND unset", () => {
  const p = probe("linux", undefined);
  const advice = new BackendAdvice(p);
  assert.equal(advice.started(), false, "one worker client");
  assert.equal(advice.started(), true);
  assert.equal(advice.started(), false, "not again");
  assert.deepEqual(p.warnings, [BACKEND_ADVICE]);
  assert.match(BACKEND_ADVICE, /DENO_WEBGPU_BACKEND=vulkan/);
});

Deno.test("BackendAdvice says nothing when the backend is set, may not be read without asking, or off Linux", () => {
  for (const [os, backend] of [["linux", "vulkan"], ["linux", null], ["darwin", undefined], ["windows", undefined]]) {
    const p = probe(os!, backend as string | undefined | null);
    const advice = new BackendAdvice(p);
    for (let i = 0; i < 4; i++) advice.started();
    assert.deepEqual(p.warnings, [], `${os}, backend ${backend}`);
  }
});
