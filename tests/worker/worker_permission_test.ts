/**
 * Contract under test: a worker client needs no permission beyond what the
 * main module needs. Imported over https (as from JSR; here a local HTTP
 * server stands in for jsr.io), the Worker loads with the import permission
 * the program already has. Imported from local files, a Worker needs read
 * access to the runtime's modules (Deno checks a Worker's module graph, not
 * the main module's): without it `createClient({ worker: true })` throws
 * `NotCapable` naming the flag, without prompting and without starting a
 * Worker; with `--allow-read` for the runtime's folder it works.
 */

import assert from "node:assert/strict";
import { filePath } from "../../src/worker/link/worker_permission.ts";

const ROOT = new URL("../..", import.meta.url);

/** A program that makes a worker client from `mod`, runs a kernel and prints the result or the error. */
function program(mod: string): string {
  return `
import { createClient, defineKernel } from ${JSON.stringify(mod)};
try {
  const client = await createClient({ worker: true });
  const inc = defineKernel({
    name: "inc",
    wgsl: "@group(0) @binding(0) var<storage, read_write> x: array<u32>;" +
      "@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] += 1u; }",
  });
  const x = client.create(new Uint32Array([1, 2, 3, 4]));
  client.launch(inc, [1], [x]);
  console.log("result " + (await client.read(x, Uint32Array)).join(","));
  client.destroy();
  await client.ended;
} catch (e) {
  console.log("error " + e.name + ": " + e.message);
}
`;
}

/** Runs `deno run --no-prompt` with `flags` on `file`; returns stdout and stderr. */
async function denoRun(flags: string[], file: string, env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--quiet", ...flags, file],
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

Deno.test("a worker client from local files without read access throws NotCapable naming the flag; with it, it runs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "denogpu-worker-perm-" });
  try {
    const file = `${dir}/program.ts`;
    await Deno.writeTextFile(file, program(new URL("mod.ts", ROOT).href));
    const denied = await denoRun([], file);
    assert.match(denied, /error NotCapable: .*--allow-read=/, denied);
    assert.doesNotMatch(denied, /result/, denied);
    const granted = await denoRun([`--allow-read=${filePath(ROOT)}`], file);
    assert.match(granted, /result 2,3,4,5/, granted);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Serves the repository over HTTP from a child process; returns its origin and a way to stop it. */
async function serveRepository(): Promise<{ origin: string; stop: () => Promise<void> }> {
  const server = `
const root = ${JSON.stringify(ROOT.href)};
Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log("port " + port) }, async (req) => {
  try {
    const body = await Deno.readFile(new URL("." + new URL(req.url).pathname, root));
    return new Response(body, { headers: { "content-type": "application/typescript" } });
  } catch {
    return new Response("not found", { status: 404 });
  }
});`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-net=127.0.0.1", `--allow-read=${filePath(ROOT)}`, "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(server));
  await writer.close();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/port \d+/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server did not start: ${text}`);
    text += value;
  }
  const port = text.match(/port (\d+)/)![1];
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill();
      await reader.cancel();
      await child.status;
    },
  };
}

Deno.test("a worker client imported over HTTP needs only the import permission of the program", async () => {
  const dir = await Deno.makeTempDir({ prefix: "denogpu-worker-remote-" });
  const server = await serveRepository();
  try {
    const file = `${dir}/program.ts`;
    await Deno.writeTextFile(file, program(`${server.origin}/mod.ts`));
    const host = server.origin.replace("http://", "");
    const out = await denoRun([`--allow-import=${host}`], file, { DENO_DIR: `${dir}/deno_dir` });
    assert.match(out, /result 2,3,4,5/, out);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("filePath() turns file URLs into POSIX and Windows paths", () => {
  assert.equal(filePath(new URL("file:///home/a%20b/x.ts")), "/home/a b/x.ts");
  assert.equal(filePath(new URL("file:///C:/Users/x/mod.ts")), "C:\\Users\\x\\mod.ts");
});
