/**
 * Where a stream's indirect launches read their workgroup counts. A count
 * normally stays where it is; when it lives in a buffer that the same launch
 * also binds as storage, WebGPU forbids the usage conflict, so the count is
 * copied into the stream's own indirect count buffer by a one-invocation
 * dispatch in the same compute pass, right before the launch's dispatch
 * (`CountCopier`): no pass break, no GPU object and no allocation per launch
 * once the count's buffer has its copy bind group. The buffer has a few
 * slots (`CountSlots`); the copy goes to one, chosen when the launch is
 * encoded. A launch none of whose bindings covers the count's bytes cannot
 * change them, so a later launch in the same pass from the same count finds
 * it still in its slot and skips its copy, as long as every dispatch between
 * them left it alone too. Launches alternating between a few such counts thus
 * copy each once per pass. Whether a launch's bindings cover a slot's count is
 * remembered per slot and bind group, so launches that repeat their bindings
 * skip those range tests.
 *
 * @module
 */

import type { Page, Slice } from "../contract/managed_memory.ts";
import { slotOf } from "../_util/slot.ts";
import type { BufferBinding } from "../contract/types.ts";
import type { CopySource, CountCopyScratch } from "../kernel/count_copy.ts";
import type { BindingResolver } from "./binding_resolver.ts";
import type { CountSlots } from "./count_slots.ts";
import type { DeviceContext } from "./device_context.ts";
import type { IndirectHost } from "./_stream_parts.ts";
import type { IndirectSource } from "../graph/graph.ts";

/** Indirect count sources of one stream. */
export class IndirectCounts {
  #stream: IndirectHost;
  #ctx: DeviceContext;
  #bindings: BindingResolver;
  #slots: CountSlots;
  /** The stream's indirect count buffer (STORAGE | INDIRECT, `CountSlots.bufferSize`), created at the first copy. */
  #buffer: GPUBuffer | null = null;
  /** The storage id and copy bind group of the last copy's source buffer. */
  #lastId = -1;
  #last: CopySource | null = null;
  /** The copy of `source`'s result, reused. */
  #copy: CountCopyScratch = { pipeline: null!, bindGroup: null!, offsets: new Uint32Array(2) };
  /** The result of `source`, reused (nothing is allocated per launch). */
  #scratch: {
    buffer: GPUBuffer;
    offset: number;
    page: Page;
    copy: CountCopyScratch | null;
    kept: boolean;
    countId: number;
    countAt: number;
    spares: number;
  } = {
    buffer: null!,
    offset: 0,
    page: null!,
    copy: null,
    kept: false,
    countId: -1,
    countAt: 0,
    spares: 0,
  };

  /**
   * Creates the instance.
   *
   * @param parts The stream, the device context, the stream's binding
   * resolver and its count slots (its command queue's).
   */
  constructor(parts: { stream: IndirectHost; ctx: DeviceContext; bindings: BindingResolver; slots: CountSlots }) {
    this.#stream = parts.stream;
    this.#ctx = parts.ctx;
    this.#bindings = parts.bindings;
    this.#slots = parts.slots;
  }

  /**
   * The buffer and offset to dispatch indirectly from (after the storage
   * bindings were resolved). A count of this stream's memory that shares no
   * buffer with the launch's bindings (always so for counts from
   * `createCount`) is read in place. One that lives in a buffer the launch
   * also binds as storage is dispatched from a slot of the stream's indirect
   * count buffer (chosen when the launch is encoded), with the copy that fills
   * it (`copy`, encoded right before the dispatch unless the slot holds the
   * count already), whether the launch leaves the count's bytes unchanged
   * (`kept`: none of its bindings covers them), and which counts held in the
   * other slots it leaves unchanged (`spares`). Returns null (after queuing an
   * error) when the binding is stale.
   *
   * The result is a scratch object, overwritten by the next call: a caller
   * that keeps it (held work) copies it and its copy.
   *
   * @param binding The count's binding.
   * @param bindings The launch's storage bindings.
   * @param n How many of them.
   * @param kernel Kernel name, for errors.
   * @param bound The slices of the launch's bindings, or null when they were
   * just resolved (the bind group cache's scratch arrays then name their buffers).
   * @param group The launch's bind group (it binds exactly `bindings`).
   * @returns The source, and the page holding the count.
   */
  source(
    binding: BufferBinding,
    bindings: readonly BufferBinding[],
    n: number,
    kernel: string,
    bound: readonly Slice[] | null,
    group: GPUBindGroup,
  ): IndirectSource & { page: Page } | null {
    const stream = this.#stream;
    const desc = binding.memory;
    let slice = desc.slice;
    let conflict = false;
    let kept = true;
    let spares = 0;
    if (
      slice !== null && slice.owner === desc && slice.page.storage.resource !== null &&
      slotOf(binding.stream, this.#ctx.settings.maxStreams) === stream.slot
    ) {
      // This stream's memory, resolved: no pin, and a conflict is a shared page.
      const id = slice.page.storage.id;
      const at = slice.offset + binding.offsetStart;
      const slots = this.#slots;
      const valid = slots.valid;
      const own = valid === 0 ? -1 : slots.find(id, at);
      const covers = own < 0
        ? this.#covers(id, at, bindings, n, bound)
        : this.#slotCovers(own, bindings, n, bound, group);
      conflict = covers >= 0;
      kept = covers <= 0;
      // The other valid slots whose counts none of the bindings covers stay valid (the count's own slot, if any,
      // holds it again after the launch iff `kept`).
      if (conflict) {
        for (let bits = own < 0 ? valid : valid & ~(1 << own); bits !== 0; bits &= bits - 1) {
          const k = 31 - Math.clz32(bits & -bits);
          if (this.#slotCovers(k, bindings, n, bound, group) <= 0) spares |= 1 << k;
        }
      }
    } else {
      kept = false; // another stream's memory, or a stale descriptor: copied every time
      if (bound !== null) {
        // The slow path compares the bind group cache's scratch ids: fill them for this launch.
        const ids = this.#ctx.bindGroups.ids;
        for (let i = 0; i < n; i++) ids[i] = bound[i]!.page.storage.id;
      }
      const r = this.#bindings.resolveIndirect(binding, n, kernel);
      if (r === null) return null;
      slice = r.slice;
      conflict = r.conflict;
    }
    const page = slice.page;
    if (page.useStream !== stream || page.useEpoch !== stream.epoch) stream.usePage(page);
    const out = this.#scratch;
    out.page = page;
    const storage = page.storage;
    const at = slice.offset + binding.offsetStart;
    if (!conflict) {
      out.buffer = storage.resource!;
      out.offset = at;
      out.copy = null;
      out.kept = false;
      out.countId = -1;
      return out;
    }
    let buffer = this.#buffer;
    if (buffer === null) {
      buffer = this.#buffer = this.#ctx.device.createBuffer({
        label: `${stream.label} indirect count`,
        size: this.#slots.bufferSize,
        usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.STORAGE,
      });
    }
    const copier = this.#ctx.countCopier;
    let from = this.#last;
    if (storage.id !== this.#lastId || from === null) {
      from = this.#last = copier.source(storage.id, storage.resource!, buffer, stream.slot);
      this.#lastId = storage.id;
    }
    const copy = this.#copy;
    copy.bindGroup = from.bindGroup;
    copier.place(copy, from, at);
    out.buffer = buffer;
    out.offset = 0;
    out.copy = copy;
    out.kept = kept;
    out.countId = storage.id;
    out.countAt = at;
    out.spares = spares;
    return out;
  }

  /**
   * `#covers` for the count that valid slot `k` holds, remembered per slot
   * and bind group (`CountSlots.groups`; a bind group's ranges never change).
   */
  #slotCovers(
    k: number,
    bindings: readonly BufferBinding[],
    n: number,
    bound: readonly Slice[] | null,
    group: GPUBindGroup,
  ): number {
    const slots = this.#slots;
    if (slots.groups[k] === group) return slots.covers[k]!;
    const covers = this.#covers(slots.ids[k]!, slots.ats[k]!, bindings, n, bound);
    slots.groups[k] = group;
    slots.covers[k] = covers;
    return covers;
  }

  /**
   * Whether the launch's bindings reach the 12 count bytes at byte `at` of
   * storage `id`: 1 when one covers any of them (the launch may change
   * them), 0 when some bind that buffer but none covers them, -1 when none
   * binds that buffer.
   */
  #covers(
    id: number,
    at: number,
    bindings: readonly BufferBinding[],
    n: number,
    bound: readonly Slice[] | null,
  ): number {
    const cache = this.#ctx.bindGroups;
    let found = -1;
    for (let i = 0; i < n; i++) {
      let start: number;
      let end: number;
      if (bound !== null) {
        const s = bound[i]!;
        if (s.page.storage.id !== id) continue;
        const b = bindings[i]!;
        start = s.offset + b.offsetStart;
        end = start + b.size - b.offsetStart - b.offsetEnd;
      } else {
        if (cache.ids[i] !== id) continue;
        start = cache.offsets[i]!;
        end = start + cache.sizes[i]!;
      }
      if (start < at + 12 && at < end) return 1;
      found = 0;
    }
    return found;
  }

  /** Destroys the indirect count buffer, if any (teardown). */
  destroy(): void {
    this.#buffer?.destroy();
  }
}
