/**
 * The gate's import check (`.ci/check_imports.ts`, `deno task imports`):
 * it passes on the module, and fails on a planted import cycle and on an
 * import that points up the layers.
 */

import assert from "node:assert/strict";
import { findCycles, findLayerViolations } from "../.ci/check_imports.ts";

const CHECKER = new URL("../.ci/check_imports.ts", import.meta.url).pathname;

/** Runs the checker in `cwd` on `entries`; returns its exit code and output. */
async function runChecker(cwd: string, entries: string[]): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-run", CHECKER, ...entries],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr) };
}

/** Writes `files` (path → source) into a fresh temporary folder. */
async function tree(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "denogpu-imports-" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${path.split("/").slice(0, -1).join("/")}`, { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  return dir;
}

Deno.test("the import check passes on the module's own entry points", async () => {
  const root = new URL("../", import.meta.url).pathname;
  const { code, text } = await runChecker(root, ["mod.ts", "server.ts"]);
  assert.equal(code, 0, text);
  assert.match(text, /no cycle, every import points down the layers/);
});

Deno.test("the import check fails on a planted cycle and names its files", async () => {
  const dir = await tree({
    "mod.ts": 'export * from "./src/stream/a.ts";\n',
    "src/stream/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
    "src/stream/b.ts": 'import { a } from "./a.ts";\nexport const b = () => a;\n',
  });
  try {
    const { code, text } = await runChecker(dir, ["mod.ts"]);
    assert.equal(code, 1, text);
    assert.match(text, /import cycle among 2 files: src\/stream\/a\.ts, src\/stream\/b\.ts/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the import check fails on an import that points up the layers", async () => {
  const dir = await tree({
    "mod.ts": 'export * from "./src/memory/pool.ts";\n',
    "src/memory/pool.ts": 'import { s } from "../stream/s.ts";\nexport const pool = s;\n',
    "src/stream/s.ts": "export const s = 1;\n",
  });
  try {
    const { code, text } = await runChecker(dir, ["mod.ts"]);
    assert.equal(code, 1, text);
    assert.match(text, /src\/memory\/pool\.ts → src\/stream\/s\.ts \(memory is below stream\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findCycles finds a self-import and a three-file ring, and nothing in a tree", () => {
  const ring = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["d"]], ["e", ["a"]]]);
  assert.deepEqual(findCycles(ring), [["a", "b", "c"], ["d"]]);
  assert.deepEqual(findCycles(new Map([["a", ["b", "c"]], ["b", ["c"]], ["c", []]])), []);
});

Deno.test("findLayerViolations refuses sibling folders of one layer, and allows imports down", () => {
  const graph = new Map([
    ["src/memory/x.ts", ["src/kernel/y.ts", "src/contract/z.ts"]],
    ["src/client/c.ts", ["src/server/s.ts", "src/errors.ts"]],
  ]);
  assert.deepEqual(findLayerViolations(graph), [
    "src/memory/x.ts → src/kernel/y.ts (memory and kernel are siblings of one layer)",
  ]);
});

Deno.test("findLayerViolations keeps src/worker/ split by thread: the link never imports server/ or the host", () => {
  const graph = new Map([
    ["src/worker/link/c.ts", [
      "src/worker/wire/p.ts",
      "src/collective/d.ts",
      "src/server/s.ts",
      "src/worker/host/h.ts",
    ]],
    ["src/worker/host/h.ts", ["src/worker/wire/p.ts", "src/server/s.ts"]],
    ["src/worker/wire/p.ts", ["src/options/o.ts", "src/server/s.ts"]],
    ["src/worker/loose.ts", ["src/errors.ts"]],
    ["src/client/c.ts", ["src/worker/link/c.ts", "src/worker/host/h.ts"]],
  ]);
  assert.deepEqual(findLayerViolations(graph), [
    "src/worker/link/c.ts → src/server/s.ts (worker/link never imports server: the Worker link reaches a server only through the wire)",
    "src/worker/link/c.ts → src/worker/host/h.ts (worker/link and worker/host are siblings of one layer)",
    "src/worker/loose.ts → src/errors.ts (folder worker has no layer in .ci/check_imports.ts)",
    "src/worker/wire/p.ts → src/server/s.ts (worker/wire and server are siblings of one layer)",
  ]);
});
