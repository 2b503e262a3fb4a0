/**
 * `deno task test`: the whole suite (the doc tests, then every `*_test.ts`
 * under `tests/`) in several `deno test` processes, one after another, and one
 * summary line over all of them in `deno test`'s own format, so that
 * `.ci/run` and a reader judge it as one run.
 *
 * Why not one process: `deno test` runs each test module in an isolate of its
 * own, and each isolate that touches `navigator.gpu` makes a WebGPU instance.
 * On an NVIDIA H100 (driver 580.159.04, Vulkan, Deno 2.9.6) one process found
 * no adapter at all once about 32 such modules had run (the doc tests alone
 * failed at their 30th), while every file alone passed and the GPU memory,
 * threads and file descriptors of the process were back at their baselines
 * between files; the 100 worker clients started before it did not bring it
 * sooner. So no process here runs more than `DENOGPU_TEST_GROUP` test modules
 * (default 20).
 *
 * Usage (what the task runs):
 * `deno run --allow-run --allow-read --allow-env .ci/test_suite.ts [flags] [paths]`.
 * Flags (`--filter x`, `--fail-fast`, ...) go to every `deno test`; paths
 * (files or folders) replace the default set, and a path given with `--doc`
 * is doc-tested as the task's doc group is. Env: `DENOGPU_TEST_GROUP` (test
 * modules per process), `DENOGPU_TEST_JOBS` (processes at once, default 1;
 * above 1 each process's output is printed when it ends).
 *
 * @module
 */

const FLAGS = ["--v8-flags=--expose-gc", "--allow-env", "--allow-read", "--allow-write", "--allow-run"];
const DOC_GROUPS = [["src/"], ["mod.ts", "server.ts", "tune.ts", "README.md", "docs/"]];
const TEST_FILE = /(^|[/_.])test\.(ts|tsx|mts|js|mjs|jsx)$/;

const env = (k: string) => Deno.env.get(k);
const GROUP = Math.max(1, Number(env("DENOGPU_TEST_GROUP") ?? 20) || 20);
const JOBS = Math.max(1, Number(env("DENOGPU_TEST_JOBS") ?? 1) || 1);

interface Tally {
  passed: number;
  passedSteps: number;
  failed: number;
  failedSteps: number;
  ignored: number;
  ignoredSteps: number;
  filtered: number;
}

const SUMMARY =
  /^(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \((\d+) steps?\))?(?: \| (\d+) ignored(?: \((\d+) steps?\))?)?(?: \| (\d+) filtered out)?/;

/** Parses `deno test`'s summary line; null for any other line. */
function parseSummary(line: string): Tally | null {
  // deno-lint-ignore no-control-regex -- strips the colour codes a terminal gets
  const m = SUMMARY.exec(line.replace(/\x1b\[[0-9;]*m/g, ""));
  if (m === null) return null;
  const n = (i: number) => Number(m[i] ?? 0);
  return {
    passed: n(2),
    passedSteps: n(3),
    failed: n(4),
    failedSteps: n(5),
    ignored: n(6),
    ignoredSteps: n(7),
    filtered: n(8),
  };
}

/** Every test module under `dir`, sorted as `deno test` orders them. */
function testFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of [...Deno.readDirSync(d)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const p = `${d.replace(/\/$/, "")}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (e.isFile && TEST_FILE.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** Splits the arguments into flags for `deno test` and paths. */
function splitArgs(args: string[]): { flags: string[]; paths: string[]; doc: boolean } {
  const flags: string[] = [];
  const paths: string[] = [];
  let doc = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--doc") doc = true;
    else if (a.startsWith("-")) {
      flags.push(a);
      // flags that take a separate value
      if (
        /^--(filter|reporter|junit-path|shuffle|coverage|trace-leaks|config|import-map)$/.test(a) && i + 1 < args.length
      ) {
        flags.push(args[++i]!);
      }
    } else paths.push(a);
  }
  return { flags, paths, doc };
}

/** The `deno test` argument lists of the run, each at most GROUP test modules. */
function groups(paths: string[], doc: boolean): string[][] {
  const runs: string[][] = [];
  const files = paths.length === 0 ? testFiles("tests") : paths.flatMap((p) => {
    try {
      return Deno.statSync(p).isDirectory ? testFiles(p) : [p];
    } catch {
      return [p]; // let deno test name what is missing
    }
  });
  if (paths.length === 0) {
    for (const g of DOC_GROUPS) runs.push(["--doc", ...g]);
  } else if (doc) runs.push(["--doc", ...paths]);
  if (paths.length === 0 || !doc) {
    for (let i = 0; i < files.length; i += GROUP) runs.push(files.slice(i, i + GROUP));
  }
  return runs;
}

interface Outcome {
  tally: Tally | null;
  status: number;
  output: string;
  /** The test that had started and not finished when the output ended (the one a crash cut short), or null. */
  running: string | null;
}

/** The test a line of Deno's report starts (`name ...`), finishes (null) or leaves as it was (undefined). */
function testLine(line: string): string | null | undefined {
  if (line.endsWith(" ...")) return line.slice(0, -4);
  return / \.\.\. (ok|FAILED|ignored)\b/.test(line) ? null : undefined;
}

/** Runs one `deno test`, echoing (or, with `buffer`, keeping) its output. */
async function runOne(args: string[], buffer: boolean): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), { args: ["test", ...args], stdout: "piped", stderr: "piped" })
    .spawn();
  let tally: Tally | null = null;
  let running: string | null = null;
  let kept = "";
  const scanLine = (l: string) => {
    tally = parseSummary(l) ?? tally;
    const r = testLine(l);
    if (r !== undefined) running = r;
  };
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (s: string) => void, scan: boolean) => {
    let rest = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      if (buffer) kept += chunk;
      else sink(chunk);
      if (!scan) continue;
      rest += chunk;
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const l of lines) scanLine(l);
    }
    if (scan && rest !== "") scanLine(rest);
  };
  const encoder = new TextEncoder();
  const out = (s: string) => void Deno.stdout.writeSync(encoder.encode(s));
  const err = (s: string) => void Deno.stderr.writeSync(encoder.encode(s));
  const [, , status] = await Promise.all([
    pump(child.stdout, out, true),
    pump(child.stderr, err, false),
    child.status,
  ]);
  return { tally, status: status.code, output: kept, running };
}

const { flags, paths, doc } = splitArgs(Deno.args);
const runs = groups(paths, doc).map((g) => [...FLAGS, ...flags, ...g]);
const started = performance.now();
const outcomes: Outcome[] = new Array(runs.length);
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(JOBS, runs.length) }, async () => {
    while (next < runs.length) {
      const i = next++;
      const o = await runOne(runs[i]!, JOBS > 1);
      if (JOBS > 1) console.log(o.output);
      outcomes[i] = o;
    }
  }),
);

const total: Tally = { passed: 0, passedSteps: 0, failed: 0, failedSteps: 0, ignored: 0, ignoredSteps: 0, filtered: 0 };
let status = 0;
const problems: string[] = [];
outcomes.forEach((o, i) => {
  const what = runs[i]!.slice(FLAGS.length + flags.length).join(" ");
  if (o.tally === null) {
    total.failed++;
    const inTest = o.running === null ? "" : `, in the test "${o.running}"`;
    problems.push(`deno test ${what}: exited with status ${o.status} before its summary${inTest}`);
  } else {
    for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += o.tally[k];
    if (o.status !== 0 && o.tally.failed === 0) {
      problems.push(`deno test ${what}: every test passed, then it exited with status ${o.status}`);
    }
  }
  if (o.status !== 0 && status === 0) status = o.status;
});
const steps = (n: number) => (n > 0 ? ` (${n} step${n === 1 ? "" : "s"})` : "");
const secs = (performance.now() - started) / 1000;
const time = secs >= 60 ? `${Math.floor(secs / 60)}m${Math.round(secs % 60)}s` : `${Math.round(secs)}s`;
console.log(
  `\nsuite: ${runs.length} deno test process${
    runs.length === 1 ? "" : "es"
  }, at most ${GROUP} test modules each (why: .ci/test_suite.ts)`,
);
for (const p of problems) console.log(`suite: ${p}`);
console.log(
  `${status === 0 && total.failed === 0 ? "ok" : "FAILED"} | ${total.passed} passed${
    steps(total.passedSteps)
  } | ${total.failed} failed${steps(total.failedSteps)}${
    total.ignored > 0 ? ` | ${total.ignored} ignored${steps(total.ignoredSteps)}` : ""
  }${total.filtered > 0 ? ` | ${total.filtered} filtered out` : ""} (${time})`,
);
Deno.exit(status !== 0 ? status : total.failed > 0 ? 1 : 0);
