/**
 * `MAP_READ` staging buffers for read-backs, reused by size class, and the
 * two ways of mapping one.
 *
 * - The spec path awaits `mapAsync`, which Deno 2.9 resolves at least 10 ms
 *   after the device is done (deno-webgpu.md §1).
 * - The early path (fast reads) does not await it: Deno's `mapAsync()` polls
 *   the device until the mapping is done before it returns, and its
 *   `getMappedRange` does not check the map state, so the bytes can be read
 *   at once. Only a buffer that has been through one awaited map cycle may be
 *   mapped early (Deno panics on a buffer never mapped). The promise left
 *   over by an early map is observed and settles ~10 ms later.
 *
 * Where the fast-read self-test verified it (`reuseCooling`), a buffer is
 * lent and mapped early again while its leftover is pending: a steady loop of
 * reads reuses a few buffers and never waits. Elsewhere a buffer is "cooling"
 * until its leftover settles and is not lent meanwhile; then a class grows
 * (doubles, within what it keeps) as soon as three quarters of its idle
 * buffers are found cooling, and a read that finds none ready takes the spec
 * path (11 ms).
 *
 * Either way leftovers settle only when the event loop waits for something,
 * which a loop of fast reads never does: `turn` says when a read should let
 * it (see `_util/event_loop_turns.ts`).
 *
 * Sizes are classes of four per doubling from 256 B (a buffer at most 19%
 * larger than asked; one exactly as large above `maxBufferSize`'s classes).
 * Idle buffers are kept per class up to 16 MiB of them (4 to 1,024 buffers;
 * one from 64 MiB). The classes small reads and syncs use are primed when
 * fast reads start (`stock`).
 *
 * @module
 */

import { alignUp } from "../_util/align.ts";
import { formatBytesExact } from "../_util/format.ts";
import { parkTurn, timerTurn } from "../_util/event_loop_turns.ts";

const MiB = 1024 * 1024;
/** Smallest class, in bytes (the class of a `sync`'s probe). */
export const MIN_CLASS = 256;
/** Idle bytes kept per class. */
const KEEP_BYTES = 16 * MiB;
/**
 * Pending leftovers past which `turn` waits for a timer, whenever a read asks
 * (each is a pending Deno op holding a timer). The timer turn settles every
 * leftover older than Deno's ~11 ms, so no more than this and the reads of
 * the last 12 ms are ever pending.
 */
export const MAX_LEFTOVERS = 1024;
/** Milliseconds a priming takes (an awaited map: Deno's fixed 10 ms wait, rounded up), with a margin. */
const PRIMING_MS = 15;

/** The size class holding `size` bytes: four per doubling from 256 B, or `size` itself (word-aligned) past `max`. */
export function readbackClass(size: number, max: number): number {
  if (size <= MIN_CLASS) return MIN_CLASS;
  let k = Math.ceil(Math.log2(size) * 4);
  while (2 ** ((k - 1) / 4) >= size) k--; // log2 may land a few ulps above an exact class
  const cls = alignUp(Math.ceil(2 ** (k / 4)), MIN_CLASS);
  return cls > max ? alignUp(size, 4) : cls;
}

/** One early map whose leftover promise has not settled yet (see `ReadbackPool.turn`). */
export interface Leftover {
  /** `performance.now()` of the early map. */
  readonly at: number;
  /** True once its promise has settled. */
  settled: boolean;
}

/** Whether buffers may be mapped early again while an earlier early map's leftover is pending. */
export interface ReusePolicy {
  /** True where the fast-read self-test verified that this reads the right bytes. */
  readonly reuseCooling: boolean;
}

/** The policy of a buffer outside a pool: never reuse while cooling. */
const NO_REUSE: ReusePolicy = { reuseCooling: false };

/** One `MAP_READ | COPY_DST` buffer lent for read-backs. */
export class ReadbackBuffer {
  /** The buffer. */
  readonly buffer: GPUBuffer;
  /** Its size, in bytes. */
  readonly size: number;
  #primed = false;
  /** Maps of it whose promise has not settled (early maps' leftovers, or its priming). */
  #pending = 0;
  /** Resolvers of `settled()` calls, run when `#pending` drops to 0. */
  #waiters: (() => void)[] = [];
  #early = false;
  #doomed = false;
  #policy: ReusePolicy;
  /** Told of every early map (its pool watches how long leftovers stay pending). */
  onEarlyMap: ((leftover: Leftover) => void) | null = null;
  /** Told when the leftover of an early map settles. */
  onLeftoverSettled: (() => void) | null = null;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param size Bytes.
   * @param label The GPU label.
   */
  constructor(device: GPUDevice, size: number, label: string, policy: ReusePolicy = NO_REUSE) {
    this.size = size;
    this.#policy = policy;
    this.buffer = device.createBuffer({ label, size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** True once an awaited map of it has completed: it may be mapped early. */
  get primed(): boolean {
    return this.#primed;
  }

  /** True while the promise of a map of it is pending (an early map's leftover, or its priming). */
  get cooling(): boolean {
    return this.#pending > 0;
  }

  /** True when its current mapping was made early (from the early map until `unmap`). */
  get mappedEarly(): boolean {
    return this.#early;
  }

  /**
   * Maps bytes `[0, bytes)` for reading. With `early` on a primed buffer (not
   * cooling, unless its policy says `reuseCooling`), the mapping is complete
   * when this returns (null); else the returned promise settles when it is
   * (the spec path, which primes it).
   *
   * @param bytes Bytes to map (a multiple of 4).
   * @param early Map early when the buffer allows it.
   * @returns Null when mapped early, else the awaited map.
   */
  map(bytes: number, early: boolean): Promise<void> | null {
    if (early && this.#primed && (this.#pending === 0 || (this.#policy.reuseCooling && !this.#early))) {
      const leftover: Leftover = { at: performance.now(), settled: false };
      const settle = () => {
        leftover.settled = true;
        this.onLeftoverSettled?.();
        this.#settleOne();
      };
      this.#pending++;
      // Observed, never awaited by the read: it settles ~10 ms later, and a rejection (device loss) is not unhandled.
      this.buffer.mapAsync(GPUMapMode.READ, 0, bytes).then(settle, settle);
      this.#early = true;
      this.onEarlyMap?.(leftover);
      return null;
    }
    const prime = () => {
      this.#primed = true;
    };
    if (this.#pending === 0) return this.buffer.mapAsync(GPUMapMode.READ, 0, bytes).then(prime);
    // Ordered after the leftovers of early maps (the pool never lends a cooling buffer for this; a safety net).
    return this.settled().then(() => this.buffer.mapAsync(GPUMapMode.READ, 0, bytes)).then(prime);
  }

  /**
   * Primes it: one awaited map cycle, after which it may be mapped early. It
   * is cooling (not lent) until then.
   */
  prime(): void {
    if (this.#primed || this.#pending > 0) return;
    this.#pending++;
    const done = () => this.#settleOne();
    this.buffer.mapAsync(GPUMapMode.READ).then(() => {
      this.buffer.unmap();
      this.#primed = true;
    }).then(done, done);
  }

  #settleOne(): void {
    if (--this.#pending > 0) return;
    if (this.#doomed) this.buffer.destroy();
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Settles when every pending map of it has (at once when none is). */
  settled(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Unmaps it (its mapped ranges are detached). */
  unmap(): void {
    this.buffer.unmap();
    this.#early = false;
  }

  /** Destroys it, at once or when its pending maps settle. */
  destroy(): void {
    if (this.#pending > 0) this.#doomed = true;
    else this.buffer.destroy();
  }
}

/** Read-back staging buffers of one stream. */
export class ReadbackPool implements ReusePolicy {
  #device: GPUDevice;
  #label: string;
  #maxBufferSize: number;
  #free = new Map<number, ReadbackBuffer[]>();
  /** Buffers alive per class, lent or idle. */
  #population = new Map<number, number>();
  /** Per class: when it may grow again (its last growth's buffers are primed by then). */
  #growAfter = new Map<number, number>();
  /** Buffers to create and prime per class (fast reads found every one cooling). */
  #wanted = new Map<number, number>();
  /** Leftovers of early maps, oldest first, from `#head` on (settled ones are dropped as found). */
  #early: Leftover[] = [];
  #head = 0;
  #onEarlyMap = (leftover: Leftover): void => {
    this.#early.push(leftover);
    this.#leftovers++;
  };
  #onLeftoverSettled = (): void => {
    this.#leftovers--;
  };
  /** Early maps whose leftover has not settled. */
  #leftovers = 0;
  /** `performance.now()` of the last turn `turn` asked for. */
  #turnAt = 0;
  #created = 0;
  #fallbacks = 0;
  #fastReads: { readonly reuse: boolean } | null;

  /**
   * Creates the instance.
   *
   * @param device The device.
   * @param options Label prefix of the buffers, and the device's `maxBufferSize`.
   */
  constructor(
    device: GPUDevice,
    options: { label: string; maxBufferSize: number; fastReads?: { readonly reuse: boolean } },
  ) {
    this.#device = device;
    this.#label = options.label;
    this.#maxBufferSize = options.maxBufferSize;
    this.#fastReads = options.fastReads ?? null;
  }

  /**
   * Whether fast reads map a primed buffer early again while the leftover of
   * its last early map is pending: where the device's fast-read self-test
   * verified that this reads the right bytes on this Deno and driver. Then a
   * steady loop of reads reuses a few buffers, and no read waits for a leftover.
   */
  get reuseCooling(): boolean {
    return this.#fastReads?.reuse ?? false;
  }

  /** Buffers created so far. */
  get created(): number {
    return this.#created;
  }

  /** Early requests that found no buffer ready and took the spec path. */
  get fallbacks(): number {
    return this.#fallbacks;
  }

  /** Early maps whose leftover promise has not settled yet. */
  get leftovers(): number {
    return this.#leftovers;
  }

  /** Bytes held by idle buffers. */
  get heldBytes(): number {
    let n = 0;
    for (const [cls, list] of this.#free) n += cls * list.length;
    return n;
  }

  /** The class a request of `size` bytes gets. */
  classOf(size: number): number {
    return readbackClass(size, this.#maxBufferSize);
  }

  /**
   * Lends an unmapped buffer of at least `size` bytes. With `early`, one that
   * can be mapped early is preferred (primed; not cooling, unless
   * `reuseCooling`), of its class or of one of the next eight (up to 4x the
   * size). Without `reuseCooling`, a cooling buffer is never lent: a Deno or
   * driver the self-test did not verify may not take a copy into it before
   * its leftover map settles.
   *
   * @param size Bytes needed.
   * @param early Prefer a buffer that can be mapped early.
   * @returns The buffer.
   */
  acquire(size: number, early = false): ReadbackBuffer {
    const cls = this.classOf(size);
    const list = this.#free.get(cls);
    const idle = list === undefined ? -1 : findFree(list, false, false);
    if (!early) return idle >= 0 ? list!.splice(idle, 1)[0]! : this.#create(cls);
    const reuse = this.reuseCooling;
    const ready = list === undefined ? -1 : findFree(list, true, reuse);
    if (ready >= 0 && reuse) return list!.splice(ready, 1)[0]!;
    if (ready >= 0) {
      // Three quarters of the class's idle buffers cooling (those past `ready`): grow it now, before it runs
      // out (once per priming: buffers being primed count as cooling until their map settles).
      if (4 * (list!.length - 1 - ready) >= 3 * list!.length && !this.#wanted.has(cls)) {
        const now = performance.now();
        if (now >= (this.#growAfter.get(cls) ?? 0)) {
          this.#growAfter.set(cls, now + PRIMING_MS);
          this.#want(cls);
        }
      }
      return list!.splice(ready, 1)[0]!;
    }
    // None of its class is ready: one of the next classes up (up to 4x the size) will do, mapped over `size` only.
    let up = cls;
    for (let k = 0; k < 8; k++) {
      up = this.classOf(up + 1);
      const l = this.#free.get(up);
      const i = l === undefined ? -1 : findFree(l, true, reuse);
      if (i >= 0) return l!.splice(i, 1)[0]!;
    }
    // Fast reads found no buffer ready to map early: this read takes the spec path, and more are primed.
    this.#want(cls);
    this.#fallbacks++;
    return idle >= 0 ? list!.splice(idle, 1)[0]! : this.#create(cls);
  }

  /**
   * Creates and primes the buffers fast reads asked for when they found none
   * ready (each priming maps once and waits; call it once the device is idle,
   * after a batch's own maps, so that the maps' synchronous polls cost
   * nothing).
   */
  primeWanted(): void {
    for (const [cls, n] of this.#wanted) {
      let list = this.#free.get(cls);
      if (list === undefined) this.#free.set(cls, list = []);
      for (let i = 0; i < n && list.length < keepOf(cls); i++) {
        const b = this.#create(cls);
        b.prime();
        list.push(b);
      }
    }
    this.#wanted.clear();
  }

  /**
   * Creates and primes `n` buffers of each class of `sizes` (within what a
   * class keeps), so fast reads of those sizes find buffers ready from their
   * first read. Call it when fast reads turn on.
   *
   * @param sizes Request sizes whose classes to stock.
   * @param n Buffers per class.
   */
  stock(sizes: readonly number[], n: number): void {
    for (const size of sizes) {
      const cls = this.classOf(size);
      let list = this.#free.get(cls);
      if (list === undefined) this.#free.set(cls, list = []);
      for (let have = this.#population.get(cls) ?? 0; have < n && list.length < keepOf(cls); have++) {
        const b = this.#create(cls);
        b.prime();
        list.push(b);
      }
    }
  }

  /** Asks for as many new buffers of a class as it has (at least 2, within what it keeps): the class doubles. */
  #want(cls: number): void {
    const have = this.#population.get(cls) ?? 0;
    this.#wanted.set(cls, Math.max(2, Math.min(have, keepOf(cls) - have)));
  }

  #create(cls: number): ReadbackBuffer {
    this.#created++;
    this.#population.set(cls, (this.#population.get(cls) ?? 0) + 1);
    const b = new ReadbackBuffer(
      this.#device,
      cls,
      `${this.#label} readback ${formatBytesExact(cls)} #${this.#created}`,
      this,
    );
    b.onEarlyMap = this.#onEarlyMap;
    b.onLeftoverSettled = this.#onLeftoverSettled;
    return b;
  }

  /**
   * A turn of the event loop for the caller to await before it settles its
   * read, or null when none is due. A leftover map's promise settles only
   * when the event loop turns and waits, and a loop of fast reads awaits
   * nothing but microtasks, so without turns leftovers pile up (and, without
   * `reuseCooling`, every buffer ends up cooling and reads fall back to the
   * spec path).
   *
   * - With `reuseCooling`, reads never wait for a leftover; turns keep the
   *   leftovers few, so that each turn settles a few dozen (settling one costs
   *   a few µs). Once one is 12 ms old (Deno settles it after ~11 ms), at most
   *   one turn per 5 ms: a light turn (`parkTurn`, ~0.1–0.2 ms), again up to
   *   twice while the oldest is still pending. Light turns settle leftovers
   *   often, not always (on a loaded machine they can miss for a while): past
   *   `MAX_LEFTOVERS` pending, every read that finds one due takes a timer
   *   turn (`timerTurn`, 1–2 ms) until they are back under it.
   * - Without it, a timer turn once a leftover is 12 ms old: the buffers come
   *   back before the pool runs out.
   */
  turn(): Promise<void> | null {
    const age = this.#oldestLeftover();
    if (age < 12) return null;
    if (!this.reuseCooling || this.#leftovers > MAX_LEFTOVERS) return timerTurn(); // the bound holds at every read
    const now = performance.now();
    if (now - this.#turnAt < 5) return null;
    this.#turnAt = now;
    return this.#settleLeftovers();
  }

  /** Light turns until the oldest leftover is younger than 12 ms, three at most. */
  async #settleLeftovers(): Promise<void> {
    for (let k = 0; k < 3; k++) {
      await parkTurn();
      if (this.#oldestLeftover() < 12) return;
    }
  }

  /** Age in ms of the oldest leftover still pending (-1 when none is). */
  #oldestLeftover(): number {
    const early = this.#early;
    while (this.#head < early.length && early[this.#head]!.settled) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > early.length) {
      early.splice(0, this.#head);
      this.#head = 0;
    }
    return this.#head < early.length ? performance.now() - early[this.#head]!.at : -1;
  }

  #destroy(b: ReadbackBuffer): void {
    this.#population.set(b.size, (this.#population.get(b.size) ?? 1) - 1);
    b.destroy();
  }

  /**
   * Waits until every command submitted so far has finished, through the map
   * of a small staging buffer: `mapAsync()` returns only once Deno has polled
   * the device to idle, so the early map of a primed buffer is the whole
   * wait, without the 10 ms `onSubmittedWorkDone` adds. A buffer not primed
   * yet takes the spec path once (and is primed by it).
   *
   * @returns Settles when the device is idle (already, for an early map).
   */
  async waitIdle(): Promise<void> {
    const probe = this.acquire(MIN_CLASS, true);
    try {
      const wait = probe.map(MIN_CLASS, true);
      this.primeWanted(); // the device is idle now: the primings' own polls cost nothing
      if (wait !== null) await wait;
      probe.unmap();
      this.release(probe);
      const turn = this.turn();
      if (turn !== null) await turn;
    } catch (e) {
      this.discard(probe);
      throw e;
    }
  }

  /**
   * Destroys a lent buffer that will not come back (a failed read's),
   * once its leftover map settles.
   *
   * @param b A buffer from `acquire`.
   */
  discard(b: ReadbackBuffer): void {
    this.#destroy(b);
  }

  /**
   * Takes an unmapped buffer back, or destroys it beyond what its class keeps.
   *
   * @param b A buffer from `acquire` (cooling or not).
   */
  release(b: ReadbackBuffer): void {
    let list = this.#free.get(b.size);
    if (list === undefined) this.#free.set(b.size, list = []);
    if (list.length >= keepOf(b.size)) this.#destroy(b);
    else list.push(b);
  }

  /** Destroys every idle buffer (a cooling one when its leftover map settles). */
  clear(): void {
    for (const list of this.#free.values()) for (const b of list) this.#destroy(b);
    this.#free.clear();
    this.#wanted.clear();
  }
}

/**
 * Index of the last buffer of `list` that is not cooling (and primed, with
 * `primed`; cooling or not, with `cooling`, which only primed buffers may be), or -1.
 */
function findFree(list: readonly ReadbackBuffer[], primed: boolean, cooling: boolean): number {
  for (let i = list.length - 1; i >= 0; i--) {
    const b = list[i]!;
    if ((cooling || !b.cooling) && (!primed || b.primed)) return i;
  }
  return -1;
}

/** Idle buffers kept of a class. */
function keepOf(cls: number): number {
  if (cls >= 64 * MiB) return 1;
  return Math.max(4, Math.min(1024, Math.floor(KEEP_BYTES / cls)));
}
