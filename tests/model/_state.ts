/**
 * The model of a run: the byte-exact contents of every live handle (with a
 * "defined" flag per byte), the graphs, pending reads and flushes, and the
 * bookkeeping shared by every operation (the clients, the history, the
 * statistics), with the helpers that read and update it.
 */

import assert from "node:assert/strict";
import type { ClientOptions, ComputeClient, Graph, Handle } from "../../mod.ts";
import type { LaunchCount } from "../../src/client/client_types.ts";
import { EXTRA_STREAMS, type ModelOptions, type ModelStats, STREAMS } from "./_options.ts";
import type { Rng } from "./_rng.ts";
import type { Kernel } from "../../mod.ts";

/** One allocation: its bytes and which of them are defined. Shared by every clone and view. */
export interface Mem {
  readonly id: number;
  readonly bytes: Uint8Array;
  /** 1 where the byte is defined (written or computed from defined bytes). */
  readonly def: Uint8Array;
  /** Stream id of the client that allocated it. */
  readonly stream: number;
  /** Live handles (clones and views) referring to it. */
  live: number;
  /** Live graphs that bind it: its last handle must not be released while one exists. */
  graphRefs: number;
  /** Holds indirect workgroup counts: only the indirect operation writes it (keeps counts small). */
  reserved: boolean;
}

/** A live handle: a byte range of a `Mem`. */
export interface Ref {
  readonly name: string;
  readonly h: Handle;
  readonly mem: Mem;
  /** Byte offset in the allocation. */
  readonly off: number;
  /** Bytes in view. */
  readonly len: number;
}

/** One launch of a modelled kernel, with its CPU effect. */
export interface LaunchSpec {
  readonly kernel: Kernel;
  readonly count: LaunchCount;
  readonly refs: Ref[];
  /** The handle holding an indirect count, if any (the graph must keep it alive too). */
  readonly countRef?: Ref;
  readonly info: Uint32Array | undefined;
  readonly text: string;
  /** Applies the effect to the model. */
  readonly apply: () => void;
}

/** A live graph, with the launches it replays. */
export interface ModelGraph {
  readonly name: string;
  readonly graph: Graph;
  readonly stream: number;
  readonly specs: LaunchSpec[];
  readonly mems: Mem[];
  /**
   * Memory allocated inside the capture window: the graph holds a reference to it (so it stays alive after
   * the user releases it, and `canMut()` is false while the graph exists).
   */
  readonly temps: Mem[];
}

/** A read whose promise is not awaited yet, with the bytes it must return. */
export interface PendingRead {
  readonly what: string;
  readonly expect: { bytes: Uint8Array; def: Uint8Array }[];
  readonly promise: Promise<Uint8Array[]>;
}

/** The bytes a read must return: the model's bytes and which of them are defined. */
export type Snapshot = { bytes: Uint8Array; def: Uint8Array };

/** The u32 words of `bytes` (a view, no copy). */
export function u32s(bytes: Uint8Array): Uint32Array {
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
}

/** Everything a run knows: the client, the model of its memory, and what the run did so far. */
export class ModelState {
  /** The run's random choices. */
  readonly rand: Rng;
  /** The client options of the run. */
  readonly config: ClientOptions;
  /** The client of stream 0; `destroy()` ends the run. */
  readonly base: ComputeClient;
  /** One client per stream of `STREAMS`. */
  readonly clients: ComputeClient[];
  /** Known-bug patterns steered around. */
  readonly avoid: ReadonlySet<string>;
  readonly verbose: boolean;
  readonly historyLength: number;
  /** The last operations, oldest first. */
  readonly history: string[] = [];
  readonly stats: ModelStats = { steps: 0, ops: {}, bytesChecked: 0, ms: 0 };
  /** The step running now. */
  step = 0;
  /** Live handles. */
  refs: Ref[] = [];
  /** Released handles (the last 16), for invalid calls. */
  readonly dead: Handle[] = [];
  readonly graphs: ModelGraph[] = [];
  readonly destroyedGraphs: Graph[] = [];
  pending: PendingRead[] = [];
  readonly pendingFlushes: { what: string; promise: Promise<unknown> }[] = [];
  /** Add-constant kernels made so far. */
  readonly freshKernels: { k: number; kernel: Kernel }[] = [];
  /** Kernels launched on this client so far: a first launch compiles, and the stream holds work behind it. */
  readonly launched: Set<Kernel> = new Set<Kernel>();
  /** Open persistent allocation windows per stream of `STREAMS`. */
  readonly persistentDepth: number[] = STREAMS.map(() => 0);
  nextMem = 0;
  nextRef = 0;
  nextGraph = 0;
  nextK = 1;
  /** The stream operations use most. */
  current = 0;
  /** While a single-stream burst runs: its stream. */
  burstStream: number | null = null;
  /** The storage offset alignment of the device. */
  readonly align: number;

  /**
   * Creates the model of a run on a fresh client.
   *
   * @param options The run's options.
   * @param rand The run's random choices.
   * @param config The client options of `base`.
   * @param base The fresh client (stream 0).
   */
  constructor(options: ModelOptions, rand: Rng, config: ClientOptions, base: ComputeClient) {
    this.rand = rand;
    this.config = config;
    this.base = base;
    this.clients = STREAMS.map((s) => (s === 0 ? base : base.onStream(s)));
    this.avoid = new Set(options.avoid ?? []);
    this.verbose = options.verbose ?? false;
    this.historyLength = options.history ?? 20;
    this.align = base.server.settings.storageOffsetAlignment;
  }

  /** Records an operation in the history (and prints it when verbose). */
  note(text: string): void {
    this.history.push(`#${this.step} ${text}`);
    if (this.history.length > this.historyLength) this.history.shift();
    if (this.verbose) console.log(`#${this.step} ${text}`);
  }

  /** The client of a stream: usually the current one, sometimes another (handles cross streams). */
  clientFor(): { c: ComputeClient; s: number } {
    const { chance, pick } = this.rand;
    const base = this.base;
    const s = this.burstStream ?? (chance(0.7) ? this.current : pick(STREAMS));
    // Now and then a fresh client object for the same stream (or for stream 129, which shares
    // stream 1's slot): it must behave the same.
    if (s === 1 && chance(0.1)) return { c: base.onStream(1 + base.server.settings.maxStreams), s };
    // Rarely a stream of its own, created on first use.
    if (this.burstStream === null && chance(0.01)) {
      const other = pick(EXTRA_STREAMS);
      return { c: base.onStream(other), s: other };
    }
    return { c: chance(0.1) ? base.onStream(s) : this.clients[s]!, s };
  }

  /** Adds a live handle on a byte range of `mem`. */
  addRef(h: Handle, mem: Mem, off: number, len: number): Ref {
    const r: Ref = { name: `h${this.nextRef++}`, h, mem, off, len };
    mem.live++;
    this.refs.push(r);
    return r;
  }

  /** A new allocation of `size` bytes on `stream`, all undefined. */
  newMem(stream: number, size: number): Mem {
    return {
      id: this.nextMem++,
      bytes: new Uint8Array(size),
      def: new Uint8Array(size),
      stream,
      live: 0,
      graphRefs: 0,
      reserved: false,
    };
  }

  /** What a read of `r` must return now. */
  snapshot(r: Ref): Snapshot {
    return {
      bytes: r.mem.bytes.slice(r.off, r.off + r.len),
      def: r.mem.def.slice(r.off, r.off + r.len),
    };
  }

  /** Checks the bytes of a read against the model (defined bytes only). */
  compare(what: string, got: Uint8Array, want: Snapshot): void {
    assert.ok(got instanceof Uint8Array, `${what}: a read must return a Uint8Array`);
    assert.equal(got.byteLength, want.bytes.byteLength, `${what}: read returned ${got.byteLength} B`);
    const bad: string[] = [];
    let defined = 0;
    for (let i = 0; i < got.byteLength; i++) {
      if (want.def[i] === 0) continue;
      defined++;
      if (got[i] !== want.bytes[i] && bad.length < 8) bad.push(`byte ${i}: got ${got[i]}, want ${want.bytes[i]}`);
    }
    if (bad.length > 0) {
      const gw = got.byteLength >= 4 ? [...u32s(got.slice(0, Math.min(32, got.byteLength & ~3)))] : [...got];
      const ww = want.bytes.byteLength >= 4
        ? [...u32s(want.bytes.slice(0, Math.min(32, want.bytes.byteLength & ~3)))]
        : [...want.bytes];
      throw new assert.AssertionError({
        message: `${what}: bytes differ from the model (${bad.join("; ")})\n  got  words ${gw}\n  want words ${ww}`,
      });
    }
    this.stats.bytesChecked += defined;
  }

  /** True when `r` is not the whole of its allocation. */
  isView(r: Ref): boolean {
    return r.off !== 0 || r.len !== r.mem.bytes.byteLength;
  }

  /** True when `r` starts at an offset a kernel may not bind. */
  unaligned(r: Ref): boolean {
    return r.off % this.align !== 0;
  }

  /**
   * Handles a kernel can bind: whole u32 arrays and views of them (front offset
   * aligned to the storage offset alignment, unless `unalignedOk`).
   */
  launchableRefs(minWords = 0, unalignedOk = false): Ref[] {
    return this.refs.filter((r) => {
      if (r.mem.reserved || r.len % 4 !== 0 || r.len < minWords * 4) return false;
      if (!this.isView(r)) return true;
      if (this.unaligned(r) && !unalignedOk) return false;
      return true;
    });
  }

  /** Handles a write may target. */
  writable(): Ref[] {
    return this.refs.filter((r) =>
      !r.mem.reserved &&
      (!this.avoid.has("view-write") || r.len % 4 === 0 || r.off + r.len === r.mem.bytes.byteLength)
    );
  }

  /** Handles that may be released: not the last one of memory a graph binds. */
  releasable(): Ref[] {
    return this.refs.filter((r) => r.mem.graphRefs === 0 || r.mem.live > 1);
  }

  /** Count handles: reserved u32 memory (only the indirect operation writes it, so counts stay small). */
  countRefs(): Ref[] {
    return this.refs.filter((r) => r.mem.reserved && r.len >= 12 && r.len % 4 === 0);
  }

  /** The workgroup counts a count handle holds in the model, or null when they are not all defined. */
  countsOf(cnt: Ref): [number, number, number] | null {
    return defW(cnt, 0) && defW(cnt, 1) && defW(cnt, 2) ? [getW(cnt, 0), getW(cnt, 1), getW(cnt, 2)] : null;
  }

  /** What `canMut()` must say: one user handle, and no graph holding the memory it allocated. */
  mutable(m: Mem): boolean {
    return m.live === 1 && !this.graphs.some((g) => g.temps.includes(m));
  }

  /** Bytes and allocations the model holds live (what `memoryUsage()` must report once all work is done). */
  liveMemBytes(): { bytes: number; allocs: number } {
    const mems = new Set([...this.refs.map((r) => r.mem), ...this.graphs.flatMap((g) => g.temps)]);
    let bytes = 0;
    for (const m of mems) bytes += m.bytes.byteLength;
    return { bytes, allocs: mems.size };
  }

  /** Releases `r`, in the client and in the model. */
  releaseRef(r: Ref): void {
    r.h.release();
    assert.equal(r.h.released, true);
    r.mem.live--;
    this.refs = this.refs.filter((x) => x !== r);
    this.dead.push(r.h);
    if (this.dead.length > 16) this.dead.shift();
  }

  /** Destroys a graph, in the client and in the model. */
  destroyGraph(g: ModelGraph): void {
    g.graph.destroy();
    assert.equal(g.graph.destroyed, true);
    for (const m of g.mems) m.graphRefs--;
    this.graphs.splice(this.graphs.indexOf(g), 1);
    this.destroyedGraphs.push(g.graph);
  }
}

/** True when a kernel may write `w` while reading `r` in the same dispatch (same range start, or disjoint). */
export function compatible(w: Ref, r: Ref): boolean {
  return w.mem !== r.mem || w.off === r.off || w.off + w.len <= r.off || r.off + r.len <= w.off;
}

/** The u32 words in view of `r`. */
export function words(r: Ref): number {
  return r.len >>> 2;
}

// Word-level access to the model, with definedness.

/** Word `i` of `r` in the model. */
export function getW(r: Ref, i: number): number {
  return u32s(r.mem.bytes)[(r.off >>> 2) + i]!;
}

/** True when every byte of word `i` of `r` is defined. */
export function defW(r: Ref, i: number): boolean {
  const at = r.off + 4 * i;
  const d = r.mem.def;
  return d[at] === 1 && d[at + 1] === 1 && d[at + 2] === 1 && d[at + 3] === 1;
}

/** Sets word `i` of `r` in the model, defined or not. */
export function setW(r: Ref, i: number, v: number, d: boolean): void {
  u32s(r.mem.bytes)[(r.off >>> 2) + i] = v >>> 0;
  r.mem.def.fill(d ? 1 : 0, r.off + 4 * i, r.off + 4 * i + 4);
}
