/**
 * `deno task test`'s runner (`.ci/test_suite.ts`): it splits the test modules
 * over several `deno test` processes, no more than `DENOGPU_TEST_GROUP` each,
 * and sums their results into one summary line in Deno's format, which
 * `.ci/run` reads. A process that dies before its summary counts as a failure.
 */

import assert from "node:assert/strict";

const RUNNER = new URL("../.ci/test_suite.ts", import.meta.url).pathname;

/** Writes `files` (name → source) into a fresh temporary folder. */
async function folder(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "denogpu-suite-" });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${name}`, text);
  return dir;
}

/** Runs the runner over `dir` with `group` modules per process; returns its exit code and output. */
async function runSuite(dir: string, group: number, jobs = 1): Promise<{ code: number; lines: string[] }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-run", "--allow-read", "--allow-env", RUNNER, dir],
    env: { DENOGPU_TEST_GROUP: String(group), DENOGPU_TEST_JOBS: String(jobs), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, lines: text.split("\n") };
}

const summaries = (lines: string[]) => lines.filter((l) => /^(ok|FAILED) \| \d+ passed/.test(l));

const PASSING = {
  "a_test.ts": 'Deno.test("a1", () => {});\nDeno.test("a2", () => {});\n',
  "b_test.ts": 'Deno.test("b1", () => {});\nDeno.test({ name: "b2", ignore: true, fn() {} });\n',
  "c_test.ts":
    'Deno.test("c1", async (t) => {\n  await t.step("s1", () => {});\n  await t.step("s2", () => {});\n});\n',
  "d_test.ts": 'Deno.test("d1", () => {});\n',
  "e_test.ts": 'Deno.test("e1", () => {});\n',
};

Deno.test("the suite runner runs at most DENOGPU_TEST_GROUP modules per process and sums them into one summary", async () => {
  const dir = await folder(PASSING);
  try {
    const { code, lines } = await runSuite(dir, 2);
    assert.equal(code, 0, lines.join("\n"));
    const all = summaries(lines);
    assert.equal(all.length, 4, "three processes (2 + 2 + 1 modules), then the total");
    for (const l of all.slice(0, 3)) {
      const modules = lines.slice(0, lines.indexOf(l)).filter((x) => x.startsWith("running ")).length;
      assert.ok(modules <= 2 * (all.indexOf(l) + 1), `${modules} modules by the end of process ${all.indexOf(l) + 1}`);
    }
    assert.match(all.at(-1)!, /^ok \| 6 passed \(2 steps\) \| 0 failed \| 1 ignored \(\d+s\)$/);
    assert.ok(lines.some((l) => l.startsWith("suite: 3 deno test processes, at most 2 test modules each")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the suite runner fails when one module fails, and counts a process that dies before its summary, naming the test it died in", async () => {
  const dir = await folder({
    ...PASSING,
    "f_test.ts": 'Deno.test("f1", () => {\n  throw new Error("planted failure");\n});\n',
    "g_test.ts": 'Deno.test("g1", () => {\n  Deno.kill(Deno.pid, "SIGKILL");\n});\n',
  });
  try {
    const { code, lines } = await runSuite(dir, 3, 2);
    assert.notEqual(code, 0, lines.join("\n"));
    const total = summaries(lines).at(-1)!;
    // Processes of [a b c], [d e f] and [g]: f1 fails, and g's process is killed before its summary, which
    // counts as one more failure.
    assert.match(total, /^FAILED \| 6 passed \(2 steps\) \| 2 failed \| 1 ignored/);
    assert.ok(
      lines.some((l) =>
        /^suite: deno test .*g_test\.ts: exited with status \d+ before its summary, in the test "g1"$/.test(l)
      ),
      lines.join("\n"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
