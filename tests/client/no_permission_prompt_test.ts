/**
 * The core needs no permission: under `deno run` in a terminal with no flags,
 * `createClient()`, a launch and a read never stop at a permission prompt.
 * The program runs in a pseudo-terminal (util-linux `script`), where Deno
 * prompts instead of throwing; the test is skipped where `script` is missing.
 */

import assert from "node:assert/strict";

const PROGRAM = `
import { createClient, defineKernel } from ${JSON.stringify(new URL("../../mod.ts", import.meta.url).href)};
const client = await createClient();
const inc = defineKernel({
  name: "inc",
  wgsl: "@group(0) @binding(0) var<storage, read_write> x: array<u32>;" +
    "@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3u) { x[g.x] += 1u; }",
});
const x = client.create(new Uint32Array([1, 2, 3, 4]));
client.launch(inc, [1], [x]);
console.log("result " + new Uint32Array((await client.read(x)).buffer).join(","));
client.destroy();
`;

function hasScript(): boolean {
  try {
    return Deno.statSync("/usr/bin/script").isFile;
  } catch {
    return false;
  }
}

Deno.test({
  name: "createClient(), a launch and a read under deno run with no flags show no permission prompt",
  ignore: !hasScript(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "denogpu-perm-" });
    try {
      const file = `${dir}/program.ts`;
      await Deno.writeTextFile(file, PROGRAM);
      const deno = Deno.execPath();
      const command = new Deno.Command("/usr/bin/script", {
        // -e: exit with the child's status; -q: no banner; the child gets a terminal.
        args: ["-qec", `'${deno}' run --quiet '${file}'`, "/dev/null"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
        signal: AbortSignal.timeout(60_000),
      });
      const child = command.spawn();
      // A prompt would wait for an answer: deny it, so the run ends either way.
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode("n\n"));
      await writer.close();
      const { stdout, stderr } = await child.output();
      const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
      assert.doesNotMatch(text, /requests .* access/i, text);
      assert.match(text, /result 2,3,4,5/, text);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
