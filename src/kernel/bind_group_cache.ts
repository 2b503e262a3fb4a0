/**
 * Bind groups cached by layout and by the (buffer id, offset, size) of every
 * binding, so a steady-state launch creates no GPU object.
 *
 * The caller fills the scratch arrays (`ids`, `offsets`, `sizes`, `buffers`)
 * for the launch and calls `get`; a hit allocates nothing. Entries naming a
 * destroyed buffer are evicted through `evictStorage`. An evicted entry stays
 * listed under the other buffers it bound until enough such stale listings
 * pile up to be worth sweeping (`#sweep`), so a long-lived buffer does not keep
 * every bind group ever made with it.
 *
 * @module
 */

import { formatBytesExact } from "../_util/format.ts";

interface Node {
  hash: number;
  layoutId: number;
  n: number;
  key: number[];
  bindGroup: GPUBindGroup;
  next: Node | null;
  /** Distinct buffers bound: the index lists that name this node. */
  storages: number;
  /** True once evicted or cleared: its listings under other buffers are stale. */
  dead: boolean;
}

/** Bind groups of one device. */
export class BindGroupCache {
  /** Scratch: storage id of each binding. */
  readonly ids: number[] = [];
  /** Scratch: byte offset of each binding. */
  readonly offsets: number[] = [];
  /** Scratch: byte size of each binding. */
  readonly sizes: number[] = [];
  /** Scratch: buffer of each binding. */
  readonly buffers: GPUBuffer[] = [];
  #device: GPUDevice;
  #map = new Map<number, Node>();
  #byStorage = new Map<number, Node[]>();
  #size = 0;
  /** Listings in `#byStorage` of live nodes. */
  #listed = 0;
  /** Listings in `#byStorage` of dead nodes, dropped by `#sweep`. */
  #stale = 0;
  #max: number;
  #created = 0;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param max Entries kept before the cache is cleared.
   */
  constructor(device: GPUDevice, max = 16384) {
    this.#device = device;
    this.#max = max;
  }

  /** Bind groups created so far. */
  get created(): number {
    return this.#created;
  }

  /** Bind groups cached now. */
  get size(): number {
    return this.#size;
  }

  /**
   * Returns the bind group for the scratch bindings `[0, n)`, plus the info
   * binding when `infoBuffer` is given, creating it on a miss.
   *
   * @param layoutId Layout number (from the pipeline cache).
   * @param layout The bind group layout.
   * @param n Number of storage bindings in the scratch arrays.
   * @param infoBuffer The info arena, or null.
   * @param infoId Storage id of the info arena.
   * @param infoSize Bytes of the info binding.
   * @returns The bind group.
   */
  get(
    layoutId: number,
    layout: GPUBindGroupLayout,
    n: number,
    infoBuffer: GPUBuffer | null,
    infoId: number,
    infoSize: number,
  ): GPUBindGroup {
    const ids = this.ids;
    const offsets = this.offsets;
    const sizes = this.sizes;
    let h = Math.imul(layoutId + 1, 0x9e3779b1);
    for (let i = 0; i < n; i++) {
      h = Math.imul(h ^ ids[i]!, 0x85ebca6b);
      h = Math.imul(h ^ offsets[i]!, 0xc2b2ae35);
      h = Math.imul(h ^ sizes[i]!, 0x27d4eb2f);
      h ^= h >>> 15;
    }
    if (infoBuffer !== null) h = Math.imul(Math.imul(h ^ infoId, 0x85ebca6b) ^ infoSize, 0xc2b2ae35);
    let node = this.#map.get(h) ?? null;
    outer: for (; node !== null; node = node.next) {
      if (node.layoutId !== layoutId || node.n !== n) continue;
      const key = node.key;
      for (let i = 0, k = 0; i < n; i++, k += 3) {
        if (key[k] !== ids[i] || key[k + 1] !== offsets[i] || key[k + 2] !== sizes[i]) continue outer;
      }
      if (infoBuffer !== null && (key[3 * n] !== infoId || key[3 * n + 1] !== infoSize)) continue;
      return node.bindGroup;
    }
    return this.#create(h, layoutId, layout, n, infoBuffer, infoId, infoSize);
  }

  #create(
    hash: number,
    layoutId: number,
    layout: GPUBindGroupLayout,
    n: number,
    infoBuffer: GPUBuffer | null,
    infoId: number,
    infoSize: number,
  ): GPUBindGroup {
    if (this.#size >= this.#max) this.clear();
    const entries: GPUBindGroupEntry[] = [];
    const key: number[] = [];
    for (let i = 0; i < n; i++) {
      entries.push({
        binding: i,
        resource: { buffer: this.buffers[i]!, offset: this.offsets[i]!, size: this.sizes[i]! },
      });
      key.push(this.ids[i]!, this.offsets[i]!, this.sizes[i]!);
    }
    if (infoBuffer !== null) {
      entries.push({ binding: n, resource: { buffer: infoBuffer, offset: 0, size: infoSize } });
      key.push(infoId, infoSize);
    }
    const bindGroup = this.#device.createBindGroup({
      label: `bind group ${this.#created}: buffers ${this.ids.slice(0, n).join(",")}${
        infoBuffer ? ` + info ${formatBytesExact(infoSize)}` : ""
      }`,
      layout,
      entries,
    });
    this.#created++;
    const storages = new Set(this.ids.slice(0, n));
    if (infoBuffer !== null) storages.add(infoId);
    const node: Node = {
      hash,
      layoutId,
      n,
      key,
      bindGroup,
      next: this.#map.get(hash) ?? null,
      storages: storages.size,
      dead: false,
    };
    this.#map.set(hash, node);
    this.#size++;
    this.#listed += storages.size;
    for (const id of storages) {
      let list = this.#byStorage.get(id);
      if (list === undefined) this.#byStorage.set(id, list = []);
      list.push(node);
    }
    return bindGroup;
  }

  /**
   * Forgets every bind group that binds the buffer `id` (called when the
   * buffer is destroyed).
   *
   * @param id Storage id of the destroyed buffer.
   */
  evictStorage(id: number): void {
    const nodes = this.#byStorage.get(id);
    if (nodes === undefined) return;
    this.#byStorage.delete(id);
    for (const node of nodes) {
      if (node.dead) {
        this.#stale--; // evicted with another buffer: this was its stale listing here
        continue;
      }
      let prev: Node | null = null;
      let cur = this.#map.get(node.hash) ?? null;
      while (cur !== null && cur !== node) {
        prev = cur;
        cur = cur.next;
      }
      if (cur === null) continue;
      if (prev === null) {
        if (node.next === null) this.#map.delete(node.hash);
        else this.#map.set(node.hash, node.next);
      } else {
        prev.next = node.next;
      }
      node.dead = true;
      this.#size--;
      this.#listed -= node.storages;
      this.#stale += node.storages - 1; // still listed under the other buffers it bound
    }
    if (this.#stale > this.#listed) this.#sweep();
  }

  /** Drops the listings of dead nodes (amortised: runs once they outnumber the live ones). */
  #sweep(): void {
    for (const [id, list] of this.#byStorage) {
      let k = 0;
      for (const node of list) if (!node.dead) list[k++] = node;
      if (k === 0) this.#byStorage.delete(id);
      else list.length = k;
    }
    this.#stale = 0;
  }

  /** Drops every cached bind group. */
  clear(): void {
    this.#map.clear();
    this.#byStorage.clear();
    this.#size = 0;
    this.#listed = 0;
    this.#stale = 0;
  }
}
