/**
 * The tight loop of a graph replay: a captured graph's dispatches encoded
 * into a stream's open pass with their prebuilt pipelines and bind groups.
 * `DispatchEncoder.replay` takes it when nothing is held, profiled or copied and the
 * whole graph fits in the current batch.
 *
 * @module
 */

import type { ReplayTask } from "../graph/graph.ts";
import type { CommandQueue } from "./command_queue.ts";

/**
 * Encodes replay tasks into `pass`, none of which copies (see `DispatchEncoder.replay`).
 * The first task checks the pass state; the others follow the graph's own
 * precomputed pipeline changes and rebinds. The caller counts the commands
 * and dispatches.
 *
 * @param q The stream's command queue.
 * @param tasks The graph's tasks.
 * @param pass The queue's open pass.
 */
export function encodeReplay(q: CommandQueue, tasks: readonly ReplayTask[], pass: GPUComputePassEncoder): void {
  const n = tasks.length;
  if (n === 0) return;
  const first = tasks[0]!;
  q.setPipeline(pass, first.pipeline);
  q.setBindGroup(pass, first.bindGroup, first.dynamic);
  let indirect = first.indirect;
  if (indirect === null) pass.dispatchWorkgroups(first.x, first.y, first.z);
  else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
  for (let i = 1; i < n; i++) {
    const t = tasks[i]!;
    if (t.pipelineChanges) pass.setPipeline(t.pipeline);
    if (t.dynamic !== null) pass.setBindGroup(0, t.bindGroup, t.dynamic, 0, 1);
    else if (t.rebinds) pass.setBindGroup(0, t.bindGroup);
    indirect = t.indirect;
    if (indirect === null) pass.dispatchWorkgroups(t.x, t.y, t.z);
    else pass.dispatchWorkgroupsIndirect(indirect.buffer, indirect.offset);
  }
  const last = tasks[n - 1]!;
  q.lastPipeline = last.pipeline;
  q.lastBindGroup = last.dynamic === null ? last.bindGroup : null;
  q.lastOffset = -1;
}
