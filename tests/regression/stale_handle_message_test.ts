/**
 * Regression: a launch on a released handle whose memory the pool has since
 * freed was refused with a message that depended on the pool: "was released"
 * from exclusive and direct pools, "was never initialized or was superseded"
 * from sliced pools (which unlinked the slice when freeing its page). Every
 * pool now unlinks the slices of the pages it frees, and a released handle is
 * reported as released first, whatever became of its slice.
 */

import assert from "node:assert/strict";
import { LaunchError, ServerUnhealthyError } from "../../mod.ts";
import { incKernel, readU32, withClient } from "../_gpu.ts";
import type { PoolConfig } from "../../mod.ts";

const POOLS: PoolConfig[] = [
  { kind: "sliced", pageSize: 1 << 16 },
  { kind: "exclusive", maxAllocSize: 1 << 16 },
  { kind: "direct" },
];

for (const pool of POOLS) {
  Deno.test(`a launch on a released handle whose ${pool.kind} page was freed is refused as released`, async () => {
    await withClient(async (client) => {
      client.installMemoryPools({ pools: [pool] });
      const x = client.create(new Uint32Array(4));
      const binding = { memory: x.memory, offsetStart: 0, offsetEnd: 0, stream: 0, size: 16 };
      await client.sync();
      x.release();
      client.memoryCleanup(); // frees the page, which only x used
      assert.equal(client.memoryUsage().bytesReserved, 0, "the page is gone");
      client.server.launch(incKernel, { kind: "static", x: 1, y: 1, z: 1 }, { buffers: [binding] }, "execute", 0);
      await assert.rejects(() => client.flush(), (e: unknown) => {
        assert.ok(e instanceof ServerUnhealthyError);
        const err = e.errors[0];
        assert.ok(err instanceof LaunchError && err.kind === "io", String(err));
        assert.match(err.message, /inc: binding 0: .*memory \d+ was released/);
        return true;
      });
      // The stream is usable afterwards.
      const y = client.create(new Uint32Array([1, 2]));
      assert.deepEqual([...await readU32(client, y)], [1, 2]);
    });
  });
}
