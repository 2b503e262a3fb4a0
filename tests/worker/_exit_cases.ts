/**
 * Programs that end a process holding worker clients, one per way a worker
 * client can end: `exit_status_test.ts` runs each in its own `deno test`
 * (or `deno run`) process and requires exit status 0. Each case is a test
 * named by its key; `deno run` runs the case named by `EXIT_CASE`.
 */

import { closeDevices, createClient, defineKernel, type Handle, type WorkerClient } from "../../mod.ts";

const inc = defineKernel({
  name: "inc",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] += 1u; }
}`,
});

/** Fails to compile: an f32 stored into a u32 array. */
const broken = defineKernel({
  name: "broken",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = 1.5; }`,
});

/**
 * Compiles, but its pipeline fails validation on every device: 4,096
 * invocations per workgroup, written as an expression the launch door cannot
 * evaluate (so the device, in the Worker, is the one that refuses it).
 */
const tooWide = defineKernel({
  name: "too-wide",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(countOneBits(0xFFFFu) * 256u) fn main(@builtin(global_invocation_id) g: vec3u) { x[0] = g.x; }`,
});

function check(got: number, want: number, what: string): void {
  if (got !== want) throw new Error(`${what}: got ${got}, want ${want}`);
}

/** Thread ids of the Workers the cases started (where Deno lets them be read: `--allow-all`). */
export const THREADS: number[] = [];

function noted(c: WorkerClient): WorkerClient {
  if (c.connection.thread !== null) THREADS.push(c.connection.thread);
  return c;
}

/** Whether thread `tid` of this process still runs. */
export function running(tid: number): boolean {
  try {
    Deno.statSync(`/proc/self/task/${tid}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Prints, at `unload` (after the runtime's own listener, registered when the
 * first worker client was made), every Worker thread still running.
 */
export function reportThreadsAtUnload(): void {
  globalThis.addEventListener("unload", () => {
    const alive = THREADS.filter(running);
    console.log(alive.length === 0 ? "no worker thread at unload" : `worker threads at unload: ${alive.join(", ")}`);
  });
}

/** A worker client that has run one launch, and its buffer, checked: x[0] is 1. */
async function workingClient(): Promise<{ c: WorkerClient; x: Handle<Uint32Array> }> {
  const c = noted(await createClient({ worker: true }));
  const x = c.create(new Uint32Array(64));
  c.launch(inc, [1], [x]);
  check((await c.read(x, Uint32Array))[0]!, 1, "x[0]");
  return { c, x };
}

/** Worker clients of devices 0, 1 and 2. */
function threeWorkerClients(): Promise<WorkerClient[]> {
  return Promise.all([0, 1, 2].map(async (i) => noted(await createClient({ worker: true, deviceIndex: i }))));
}

/** Three worker clients (devices 0–2) that have each run a launch and a read. */
async function threeWorkedClients(): Promise<WorkerClient[]> {
  const cs = await threeWorkerClients();
  const xs = cs.map((c) => c.create(new Uint32Array(1 << 12)));
  cs.forEach((c, i) => c.launch(inc, [64], [xs[i]!]));
  await Promise.all(cs.map((c, i) => c.read(xs[i]!, Uint32Array)));
  return cs;
}

/** Three worker clients that have all-reduced 1 Mi f32 (checked). */
async function allReducedThree(): Promise<WorkerClient[]> {
  const cs = await threeWorkerClients();
  const n = 1 << 20;
  const xs = cs.map((c, i) => c.create(Float32Array.from({ length: n }, (_, j) => i + (j % 7))));
  cs.forEach((c, i) => c.allReduce(xs[i]!, xs[i]!, { dtype: "f32", devices: [0, 1, 2] }));
  await Promise.all(cs.map((c) => c.syncCollective()));
  check((await cs[2]!.read(xs[2]!, Float32Array))[1]!, 0 + 1 + 2 + 3, "x[1]");
  return cs;
}

/** Destroys the clients at once, then waits until each Worker has closed and its thread is gone. */
async function destroyTogether(cs: readonly WorkerClient[]): Promise<void> {
  for (const c of cs) c.destroy();
  await Promise.all(cs.map((c) => c.ended));
  const start = performance.now();
  while (THREADS.some(running) && performance.now() - start < 10_000) await new Promise((r) => setTimeout(r, 2));
}

/**
 * Resolves once every client's Worker has closed and its thread has exited; rejects when a Worker closed while the
 * thread of one that closed before it still ran (its teardown did not wait for its turn).
 */
async function closingOrder(cs: readonly WorkerClient[]): Promise<void> {
  if (cs.some((c) => c.connection.thread === null)) throw new Error("this case reads /proc: run it with --allow-all");
  const closed: number[] = [];
  const overlaps: string[] = [];
  await Promise.all(cs.map((c) =>
    c.connection.ended.then(() => {
      const alive = closed.filter(running);
      if (alive.length > 0) overlaps.push(`${c.connection.thread} closed while ${alive.join(", ")} still ran`);
      closed.push(c.connection.thread!);
    })
  ));
  await Promise.all(cs.map((c) => c.ended));
  check(overlaps.length, 0, `Workers that closed while another's thread still ran (${overlaps.join("; ")})`);
}

/** The cases, by name. */
export const CASES: Record<string, () => Promise<void>> = {
  /** Create, ten launches, a read, destroy. */
  async plain() {
    const c = noted(await createClient({ worker: true }));
    const x = c.create(new Uint32Array(256));
    for (let i = 0; i < 10; i++) c.launch(inc, [4], [x]);
    check((await c.read(x, Uint32Array))[0]!, 10, "x[0]");
    c.destroy();
    await c.ended;
  },
  /** A WGSL compile error reported at flush, then more work. */
  async compileError() {
    const c = noted(await createClient({ worker: true }));
    const x = c.create(new Uint32Array(4));
    c.launch(broken, [1], [x]);
    await c.flush().then(() => Promise.reject(new Error("flush did not fail")), () => {});
    c.launch(inc, [1], [x]);
    check((await c.read(x, Uint32Array))[0]!, 1, "x[0]");
    c.destroy();
    await c.ended;
  },
  /** A pipeline that fails validation in the worker, reported at flush, then more work. */
  async validationError() {
    const c = noted(await createClient({ worker: true }));
    const x = c.create(new Uint32Array(4));
    c.launch(tooWide, [1], [x]);
    await c.flush().then(() => Promise.reject(new Error("flush did not fail")), () => {});
    c.launch(inc, [1], [x]);
    check((await c.read(x, Uint32Array))[0]!, 1, "x[0]");
    c.destroy();
    await c.ended;
  },
  /** Destroyed while reads of queued work are pending. */
  async destroyWithReadsPending() {
    const c = noted(await createClient({ worker: true }));
    const x = c.create(new Uint32Array(1 << 16));
    for (let i = 0; i < 50; i++) c.launch(inc, [1024], [x]);
    const reads = [c.read(x), c.read(x), c.read(x)];
    c.destroy();
    const settled = await Promise.allSettled(reads);
    if (settled.some((s) => s.status === "fulfilled" && s.value.byteLength !== x.size)) throw new Error("short read");
    await c.ended;
  },
  /** Three worker clients all-reduce 1 Mi f32, then `closeDevices()`. */
  async allReduceThree() {
    await allReducedThree();
    await closeDevices();
    check(THREADS.filter(running).length, 0, "Worker threads still running once closeDevices() settled");
  },
  /**
   * As `allReduceThree`, but the three clients are destroyed at once (as `closeDevices()` did before it closed
   * Workers one after another), then waited for until their threads are gone.
   */
  async allReduceThreeTogether() {
    const cs = await allReducedThree();
    await destroyTogether(cs);
  },
  /** Three worker clients (devices 0–2) each launch and read, with no collective, then are destroyed at once. */
  async threeWorkers() {
    const cs = await threeWorkerClients();
    const xs = cs.map((c) => c.create(new Uint32Array(1 << 16)));
    cs.forEach((c, i) => c.launch(inc, [1024], [xs[i]!]));
    const reads = await Promise.all(cs.map((c, i) => c.read(xs[i]!, Uint32Array)));
    check(reads.reduce((sum, r) => sum + r[1]!, 0), 3, "x[1] summed over the clients");
    await destroyTogether(cs);
  },
  /**
   * Three worker clients destroyed at once tear down in turn: each Worker closes only once the thread of the one
   * that closed before it has exited (several Workers tearing their devices down at once crashed the process on an
   * H100).
   */
  async destroyedTogetherTakeTurns() {
    const cs = await threeWorkedClients();
    const order = closingOrder(cs);
    for (const c of cs) c.destroy();
    await order;
  },
  /**
   * A worker client's device is lost while two others are being destroyed: its Worker too tears down in turn,
   * closing only once the threads of the Workers that closed before it have exited.
   */
  async lostWhileOthersTearDown() {
    const cs = await threeWorkedClients();
    const order = closingOrder(cs);
    cs[0]!.destroy();
    cs[1]!.destroy();
    await cs[2]!.connection.call({ method: "simulateLoss" }).catch(() => {});
    await order;
  },
  /** A main-thread client and a worker client in one process. */
  async mainAndWorker() {
    const w = noted(await createClient({ worker: true }));
    const m = await createClient();
    const x = w.create(new Uint32Array(64));
    const y = m.create(new Uint32Array(64));
    w.launch(inc, [1], [x]);
    m.launch(inc, [1], [y]);
    check((await w.read(x, Uint32Array))[0]! + (await m.read(y, Uint32Array))[0]!, 2, "x[0] + y[0]");
    m.destroy();
    w.destroy();
    await w.ended;
  },
  /** The worker's device is lost while a read waits; the Worker ends itself. */
  async lostWithReadPending() {
    const { c, x } = await workingClient();
    const lost = c.connection.call({ method: "simulateLoss" });
    const pending = c.read(x).then(() => Promise.reject(new Error("read after the loss did not fail")), () => {});
    await pending;
    await lost.catch(() => {});
    await c.ended;
    c.destroy();
  },
  /** The worker's device is lost with nothing pending, then a new worker client works. */
  async lostThenAnother() {
    const { c } = await workingClient();
    await c.connection.call({ method: "simulateLoss" }).catch(() => {});
    await c.ended;
    const d = (await workingClient()).c;
    d.destroy();
    await d.ended;
  },
  /** Destroyed, and the program ends without awaiting `ended`. */
  async notAwaited() {
    const { c } = await workingClient();
    c.destroy();
  },
  /** Never destroyed: the runtime ends it at `unload`. */
  async forgotten() {
    await workingClient(); // never destroyed
  },
};

if (import.meta.main) {
  const name = Deno.env.get("EXIT_CASE") ?? "";
  const run = CASES[name];
  if (run === undefined) throw new Error(`EXIT_CASE: no case "${name}"`);
  await run();
  reportThreadsAtUnload();
  console.log(`case ${name} done`);
}
