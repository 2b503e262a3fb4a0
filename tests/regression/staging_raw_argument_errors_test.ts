/**
 * Regression: `staging(sizes)` iterated `sizes` unchecked and allocated each
 * size as asked, so `staging(5)` threw a raw "sizes is not iterable" and
 * `staging([2 ** 52])` V8's raw "Array buffer allocation failed". A staging
 * view larger than `maxBufferSize` could never be written anyway (`create`
 * and `write` move at most that many bytes). Now a non-array is a `TypeError`
 * and a size above `maxBufferSize` a `ResourceLimitError`, both naming
 * `staging`, and nothing is lent.
 *
 * Found by reading `HostTransfers.staging` (src/server/host_transfers.ts).
 */

import assert from "node:assert/strict";
import { ResourceLimitError } from "../../mod.ts";
import { withClient } from "../_gpu.ts";

Deno.test("staging refuses sizes that are not an array with a TypeError naming staging", async () => {
  await withClient((client) => {
    assert.throws(
      () => client.staging(5 as never),
      (e: unknown) => e instanceof TypeError && /^staging: /.test(e.message),
    );
  });
});

Deno.test("staging refuses a size above maxBufferSize with a ResourceLimitError and lends nothing", async () => {
  await withClient(async (client) => {
    const max = client.properties.memory.maxBufferSize;
    const created = client.server.hostStaging.created;
    for (const size of [max + 1, 2 ** 52]) {
      assert.throws(
        () => client.staging([16, size]),
        (e: unknown) => e instanceof ResourceLimitError && /^staging/.test(e.message),
      );
    }
    assert.equal(client.server.hostStaging.created, created);
    const [view] = client.staging([4]);
    view!.set([1, 2, 3, 4]);
    const h = client.create(view!);
    assert.deepEqual([...await client.read(h)], [1, 2, 3, 4]);
    h.release();
  });
});
