/**
 * The process never exits while a worker client's thread is inside the driver.
 *
 * A Worker that calls `self.close()` tells the main thread at once, but its
 * thread then still tears down: its V8 heap (the `GPUDevice` and the wrapper
 * of every buffer and pipeline), its WebGPU instance and the driver state
 * behind them. A process that exits meanwhile runs the driver's and libc's
 * exit handlers while that thread is still in the driver: on the H200
 * (NVIDIA 580, Vulkan) most `deno test` processes that ended right after a
 * worker client segfaulted or aborted ("double free or corruption"), and
 * some hung, although every test had passed. Waiting until the thread had
 * exited made every one of them exit cleanly.
 *
 * So the main thread keeps, per Worker that closed, when it closed and its
 * thread id, and an `unload` listener (Deno dispatches `unload` at the end of
 * `deno run`, of each `deno test` module, and in `Deno.exit()`) blocks until
 * every such thread is gone: watched in `/proc/self/task` where Deno allows
 * reading it (only with `--allow-all`; checked by trying), else for a grace
 * after the last close: 500 ms, and 250 ms more for each other Worker that
 * closed shortly before it (teardowns in one driver run partly one after
 * another). On the H200 one Worker's thread took 49–64 ms to exit after it
 * closed. A worker client still open at `unload` is destroyed first (through
 * its ring, which needs no event loop turn), and waited for.
 *
 * Workers also tear down one at a time. Several Worker threads tearing their
 * devices down at once crashed the process on an H100 (NVIDIA 580, Vulkan):
 * a segfault in one Worker's thread, at code no longer mapped, after the
 * others had exited (bench/RESULTS.md, runs 39 and 40; about 1 in 60
 * processes). Teardowns in turn never crashed. So `teardownInTurn` starts a
 * Worker's teardown only once every teardown before it has ended and every
 * Worker thread that closed before has exited, and `unload` closes the Workers
 * still open one after another. A Worker whose device is lost does not close
 * itself: it waits for the destroy the main thread sends in its turn.
 *
 * @module
 */

/** Milliseconds waited after a Worker closed when its thread cannot be watched. */
export const THREAD_EXIT_GRACE_MS = 500;
/** Milliseconds more for each other such Worker that closed within `GIVE_UP_MS` of it. */
const GRACE_PER_OTHER_MS = 250;
/** Milliseconds an open worker client gets at `unload` to destroy its device and close. */
const CLOSE_AT_UNLOAD_MS = 5_000;
/** Milliseconds after which a thread still listed is given up on. */
const GIVE_UP_MS = 10_000;
/** Milliseconds `threadExited` allows a thread it cannot watch, after its Worker closed. */
const THREAD_EXIT_WAIT_MS = 100;

/** What the guard needs of a worker client that is still open. */
export interface ExitParticipant {
  /**
   * Has the Worker destroy its device and close, and waits (blocking) until it
   * is about to close itself, at most `ms`.
   *
   * @param ms The longest wait.
   * @returns True when the Worker said it closes.
   */
  closeNow(ms: number): boolean;
  /** The Worker's thread id, where it could be read, else null. */
  readonly thread: number | null;
  /** True once the Worker was told to destroy its device. */
  readonly destroying: boolean;
}

interface Closing {
  readonly thread: number | null;
  readonly at: number;
}

const open = new Set<ExitParticipant>();
const closing: Closing[] = [];
let installed = false;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleep(ms: number): void {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * The id of the calling thread (a Linux thread id), where Deno lets it be
 * read (`/proc` needs `--allow-all`).
 *
 * @returns The thread id, or null.
 */
export function ownThreadId(): number | null {
  if (Deno.build.os !== "linux") return null;
  try {
    const link = Deno.readLinkSync("/proc/thread-self"); // "<pid>/task/<tid>"
    const tid = Number(link.slice(link.lastIndexOf("/") + 1));
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/** Whether thread `tid` of this process still runs: true, false, or null when it cannot be told. */
function running(tid: number): boolean | null {
  try {
    Deno.statSync(`/proc/self/task/${tid}`);
    return true;
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? false : null;
  }
}

/** Blocks until every closing Worker's thread is gone (or the grace has passed for those that cannot be watched). */
function waitForThreads(): void {
  let blind = 0;
  let last = 0;
  for (const c of closing.splice(0)) {
    const tid = c.thread;
    if (tid === null || running(tid) === null) {
      blind++;
      last = Math.max(last, c.at);
      continue;
    }
    const start = performance.now();
    while (running(tid) === true && performance.now() - start < GIVE_UP_MS) sleep(1);
  }
  if (blind > 0) sleep(last + THREAD_EXIT_GRACE_MS + GRACE_PER_OTHER_MS * (blind - 1) - performance.now());
}

/**
 * Resolves once the thread of a Worker that has closed itself has exited,
 * without blocking the thread that waits: watched in `/proc/self/task` where
 * Deno allows reading it, else `THREAD_EXIT_WAIT_MS` after it closed (on the
 * H200 a Worker's thread exited 49–64 ms after it closed). Gives up 10 s
 * after it closed.
 *
 * @param thread The Worker's thread id, or null where it could not be read.
 * @param closedAt When the Worker closed (`performance.now()`); now when omitted.
 * @returns Settles once the thread is gone (or given up on).
 */
export async function threadExited(thread: number | null, closedAt: number = performance.now()): Promise<void> {
  if (thread === null || running(thread) === null) {
    return await wait(closedAt + THREAD_EXIT_WAIT_MS - performance.now());
  }
  while (running(thread) === true && performance.now() - closedAt < GIVE_UP_MS) await wait(1);
}

function wait(ms: number): Promise<void> {
  return ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/** The end of the last teardown queued (never rejects). */
let turn: Promise<void> = Promise.resolve();

/**
 * Runs a Worker's teardown in its turn: once every teardown queued before it
 * has ended (or 10 s have passed since it began) and the thread of every
 * Worker that closed before has exited. The event loop is not blocked. A
 * teardown that throws or rejects ends its turn as one that ended does.
 *
 * @param teardown Starts the teardown; resolves once the Worker's thread has exited.
 * @returns Settles when the teardown has ended (or was given up on); never rejects.
 */
export function teardownInTurn(teardown: () => Promise<void>): Promise<void> {
  const run = turn.then(closedThreadsExited).then(() => capped(teardown())).catch(() => {});
  turn = run;
  return run;
}

/** Resolves once the thread of every Worker that closed so far has exited (or was given up on). */
async function closedThreadsExited(): Promise<void> {
  for (const c of [...closing]) await threadExited(c.thread, c.at);
}

/** `p`, or a settled promise after `GIVE_UP_MS`, without a timer left behind; never rejects. */
function capped(p: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<void>((resolve) => timer = setTimeout(resolve, GIVE_UP_MS));
  return Promise.race([p, limit]).catch(() => {}).finally(() => clearTimeout(timer));
}

function install(): void {
  if (installed || typeof globalThis.addEventListener !== "function") return;
  installed = true;
  globalThis.addEventListener("unload", onUnload);
}

function onUnload(): void {
  waitForThreads();
  // One after another, the one whose teardown already began first.
  const left = [...open].sort((a, b) => Number(b.destroying) - Number(a.destroying));
  for (const p of left) {
    open.delete(p);
    p.closeNow(CLOSE_AT_UNLOAD_MS);
    closing.push({ thread: p.thread, at: performance.now() });
    waitForThreads();
  }
}

/**
 * Registers a worker client that is open (its Worker holds a device).
 *
 * @param participant The client's connection.
 */
export function workerOpened(participant: ExitParticipant): void {
  install();
  open.add(participant);
}

/**
 * Notes that a Worker has closed itself (or is about to): the process will
 * not end before its thread has.
 *
 * @param thread The Worker's thread id, or null.
 * @param participant Its connection, when it was registered as open.
 */
export function workerClosed(thread: number | null, participant?: ExitParticipant): void {
  if (participant !== undefined) open.delete(participant);
  install();
  const now = performance.now();
  // Threads that closed long ago are gone: keep the list as short as the recent closes.
  while (closing.length > 0 && now - closing[0]!.at > GIVE_UP_MS) closing.shift();
  closing.push({ thread, at: now });
}
