/**
 * Recording a launch into the graph being captured: its bindings are
 * resolved now and pinned for the graph's lifetime (with its indirect count),
 * its info words copied, its indirect source noted; nothing is encoded.
 *
 * @module
 */

import type { PipelineEntry } from "../kernel/pipeline_cache.ts";
import type { Page } from "../contract/managed_memory.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { BindingResolver } from "./binding_resolver.ts";
import type { RecordingHost } from "./_stream_parts.ts";
import type { GraphRecorder, RecordedDispatch } from "../graph/graph.ts";
import type { InfoWords } from "../contract/types.ts";

/** A launch as the stream received it. */
export interface LaunchToRecord {
  /** The compiled pipeline. */
  readonly entry: PipelineEntry;
  /** Storage bindings. */
  readonly bindings: readonly BufferBinding[];
  /** Info words, or null. */
  readonly info: InfoWords | null;
  /** Static counts. */
  readonly x: number;
  /** Static counts. */
  readonly y: number;
  /** Static counts. */
  readonly z: number;
  /** Indirect count source, or null. */
  readonly indirect: BufferBinding | null;
}

/**
 * Records one launch into `recorder`. A stale binding queues an error on the
 * stream, which makes `endCapture` fail.
 *
 * @param stream The recording stream.
 * @param recorder Its recording.
 * @param launch The launch.
 * @param resolver The stream's binding resolver.
 */
export function recordLaunch(
  stream: RecordingHost,
  recorder: GraphRecorder,
  launch: LaunchToRecord,
  resolver: BindingResolver,
): void {
  const { entry, bindings, info, x, y, z, indirect } = launch;
  const n = entry.buffers;
  const name = entry.kernel.name;
  if (resolver.resolve(bindings, n, name, recorder.pins) < 0) return;
  const cache = stream.bindGroups;
  const pages: Page[] = [];
  for (let i = 0; i < n; i++) {
    const memory = bindings[i]!.memory;
    recorder.pin(memory);
    pages.push(memory.slice!.page);
  }
  let source: RecordedDispatch["indirect"] = null;
  if (indirect !== null) {
    // Cross-stream counts are pinned for the graph's lifetime.
    const r = resolver.resolveIndirect(indirect, n, name, recorder.pins);
    if (r === null) return;
    const { slice, conflict } = r;
    recorder.pin(indirect.memory);
    source = {
      buffer: slice.page.storage.resource!,
      offset: slice.offset + indirect.offsetStart,
      page: slice.page,
      copy: conflict,
    };
  }
  if (entry.state !== "valid") stream.errors.watchPipeline(entry);
  recorder.dispatches.push({
    entry,
    buffers: cache.buffers.slice(0, n),
    offsets: cache.offsets.slice(0, n),
    sizes: cache.sizes.slice(0, n),
    pages,
    info: info === null ? null : new Uint32Array(info.buffer.slice(info.byteOffset, info.byteOffset + info.byteLength)),
    x,
    y,
    z,
    indirect: source,
  });
}
