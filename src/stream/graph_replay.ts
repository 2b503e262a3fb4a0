/**
 * The tight loop of a graph replay: a captured graph's dispatches encoded
 * into a stream's open pass with their prebuilt pipelines and bind groups.
 * `DispatchEncoder.replay` takes it when nothing is held or profiled and the
 * whole graph fits in the current batch.
 *
 * @module
 */

import type { ReplayTask } from "../graph/graph.ts";
import { encodeCountCopy } from "../kernel/count_copy.ts";
import type { CommandQueue } from "./command_queue.ts";

/**
 * Encodes replay tasks into `pass` (see `DispatchEncoder.replay`), a count
 * copy right before each dispatch that has one. The first task checks the
 * pass state; the others follow the graph's own precomputed pipeline changes
 * and rebinds (a task that copies its count sets both). The caller counts
 * the commands and dispatches.
 *
 * @param q The stream's command queue.
 * @param tasks The graph's tasks.
 * @param pass The queue's open pass.
 */
export function encodeReplay(q: CommandQueue, tasks: readonly ReplayTask[], pass: GPUComputePassEncoder): void {
  const n = tasks.length;
  if (n === 0) return;
  const first = tasks[0]!;
  let indirect = first.indirect;
  if (indirect !== null && indirect.copy !== null) {
    encodeCountCopy(pass, indirect.copy);
    q.lastPipeline = null;
  }
  q.setPipeline(pass, first.pipeline);
  q.setBindGroup(pass, first.bindGroup, first.dynamic);
  if (indirect === null) pass.dispatchWorkgroups(first.x, first.y, first.z);
  else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
  for (let i = 1; i < n; i++) {
    const t = tasks[i]!;
    indirect = t.indirect;
    if (indirect !== null && indirect.copy !== null) encodeCountCopy(pass, indirect.copy);
    if (t.pipelineChanges) pass.setPipeline(t.pipeline);
    if (t.dynamic !== null) pass.setBindGroup(0, t.bindGroup, t.dynamic, 0, 1);
    else if (t.rebinds) pass.setBindGroup(0, t.bindGroup);
    if (indirect === null) pass.dispatchWorkgroups(t.x, t.y, t.z);
    else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
  }
  const last = tasks[n - 1]!;
  q.lastPipeline = last.pipeline;
  q.lastBindGroup = last.dynamic === null ? last.bindGroup : null;
  q.lastOffset = -1;
}
