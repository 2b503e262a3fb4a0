/** Runs the shared `MemoryPool` contract against every pool kind. */

import { DirectPool, ExclusivePool, PersistentPool, SlicedPool } from "../../mod.ts";
import { runMemoryPoolContract } from "./memory_pool_contract.ts";

runMemoryPoolContract("SlicedPool", (s) => new SlicedPool(s, { pageSize: 4096, maxSliceSize: 4096 }, "sliced"));
runMemoryPoolContract("ExclusivePool", (s) => new ExclusivePool(s, { maxAllocSize: 1024 }, "exclusive"));
runMemoryPoolContract("PersistentPool", (s) => new PersistentPool(s, "persistent"));
runMemoryPoolContract("DirectPool", (s) => new DirectPool(s, {}, "direct"));
