/**
 * Contract under test: persisted decisions. A second process reuses a
 * decision without running any other candidate (JSON file and localStorage,
 * the latter shared by `deno run` and `deno test` of one project); processes
 * writing one file at once end with one consistent entry per key; stores
 * ignore what they cannot read.
 */

import assert from "node:assert/strict";
import { createTuneStore, jsonFileTuneStore, localStorageTuneStore, tuneDeviceKey } from "../../tune.ts";
import { storeKey } from "../../src/tune/tune_store.ts";

const SCRIPT = new URL("./_tune_process.ts", import.meta.url);
const ROOT = new URL("../..", import.meta.url);

interface Ran {
  source: string;
  calls: string[];
  rounds: number;
  output: string;
}

async function tuneInProcess(store: string, key = "1", delayMs = 0): Promise<Ran> {
  return (await tuneWith(["--allow-read", "--allow-write"], store, key, delayMs)).ran;
}

/** Tunes in a child `deno run --no-prompt` with only `permissions`; returns what it printed and its warnings. */
async function tuneWith(permissions: string[], store: string, key = "1", delayMs = 0): Promise<{
  ran: Ran;
  stderr: string;
}> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...permissions, SCRIPT.pathname, store, key, String(delayMs)],
    cwd: ROOT.pathname,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, err);
  return { ran: JSON.parse(new TextDecoder().decode(stdout).trim()), stderr: err };
}

Deno.test("a second process reuses the decision in a JSON file without running any other candidate", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/cache/tune.json`;
    const first = await tuneInProcess(path);
    assert.equal(first.source, "tuned");
    assert.ok(first.calls.includes("a") && first.calls.includes("c"));
    assert.equal(first.output, "b:1");
    const second = await tuneInProcess(path);
    assert.deepEqual(second, { source: "persisted", calls: ["b"], rounds: 0, output: "b:1" });
    const file = JSON.parse(await Deno.readTextFile(path));
    const [key] = Object.keys(file.entries);
    assert.deepEqual(JSON.parse(key!), ["test-device", "persist-demo", '{"n":1}']);
    assert.equal(file.entries[key!].winner, "b");
    assert.deepEqual(file.entries[key!].results.map((r: { name: string }) => r.name), ["a", "b", "c"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("processes tuning into one JSON file at once keep every key and one consistent entry per key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tune.json`;
    const runs = await Promise.all([
      tuneInProcess(path, "1", 5),
      tuneInProcess(path, "1", 5),
      tuneInProcess(path, "2", 5),
      tuneInProcess(path, "3", 5),
    ]);
    assert.ok(runs.every((r) => r.output.startsWith("b:")));
    const file = JSON.parse(await Deno.readTextFile(path));
    const keys = Object.keys(file.entries).map((k) => JSON.parse(k)[2]).sort();
    assert.deepEqual(keys, ['{"n":1}', '{"n":2}', '{"n":3}']);
    for (const e of Object.values(file.entries) as { winner: string; checksum: string }[]) {
      assert.equal(e.winner, "b");
    }
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(left, ["tune.json"], "no temporary or lock file is left behind");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a JSON file cache works with read and write access to its folder only, as the README says", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tune.json`;
    const folder = [`--allow-read=${dir}`, `--allow-write=${dir}`];
    const first = await tuneWith(folder, path);
    assert.equal(first.ran.source, "tuned");
    assert.equal(first.stderr, "", "no warning");
    const second = await tuneWith(folder, path);
    assert.deepEqual(second.ran, { source: "persisted", calls: ["b"], rounds: 0, output: "b:1" });
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["tune.json"], "only the file is left there");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("with access to the JSON file alone a decision is read but not written, and the warning names the folder and both flags", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tune.json`;
    const fileOnly = [`--allow-read=${path}`, `--allow-write=${path}`];
    const denied = await tuneWith(fileOnly, path);
    assert.equal(denied.ran.output, "b:1", "tuning still decides");
    assert.ok(
      denied.stderr.includes(`--allow-read=${dir} --allow-write=${dir}`),
      `the warning names the folder's flags:\n${denied.stderr}`,
    );
    assert.match(denied.stderr, /a lock file and a temporary file go beside it/);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing was written");
    await tuneInProcess(path); // written with full access
    assert.deepEqual((await tuneWith(fileOnly, path)).ran.source, "persisted", "reading needs the file alone");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "deno run and deno test of one project share localStorage: a decision made by `deno run` is read here",
  { ignore: !Deno.cwd().startsWith(ROOT.pathname.replace(/\/$/, "")) },
  async () => {
    const prefix = `tune-store-test-${Deno.pid}-${Date.now()}:`;
    try {
      const ran = await tuneInProcess(`local-storage:${prefix}`);
      assert.equal(ran.source, "tuned");
      const entry = await localStorageTuneStore({ prefix }).get(storeKey("test-device", "persist-demo", '{"n":1}'));
      assert.equal(entry?.winner, "b");
      const again = await tuneInProcess(`local-storage:${prefix}`);
      assert.deepEqual(again.calls, ["b"]);
    } finally {
      for (let i = localStorage.length - 1; i >= 0; i--) {
        const k = localStorage.key(i);
        if (k?.startsWith(prefix)) localStorage.removeItem(k);
      }
    }
  },
);

Deno.test("stores ignore unreadable entries and files instead of throwing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tune.json`;
    await Deno.writeTextFile(path, "{ not json");
    const store = jsonFileTuneStore(path);
    assert.equal(await store.get("k"), undefined);
    await store.set("k", { checksum: "c", winner: "w" });
    assert.equal((await store.get("k"))?.winner, "w");
    await Deno.writeTextFile(path, JSON.stringify({ version: 1, entries: { k: { winner: 3 } } }));
    assert.equal(await store.get("k"), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const prefix = `tune-store-junk-${Deno.pid}:`;
  localStorage.setItem(`${prefix}k`, "{ junk");
  try {
    assert.equal(localStorageTuneStore({ prefix }).get("k"), undefined);
  } finally {
    localStorage.removeItem(`${prefix}k`);
  }
});

Deno.test("a lock left behind by a dead process is taken over once stale", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tune.json`;
    await Deno.writeTextFile(`${path}.lock`, "");
    const old = new Date(Date.now() - 60_000);
    await Deno.utime(`${path}.lock`, old, old);
    await jsonFileTuneStore(path, { lockTimeoutMs: 500 }).set("k", { checksum: "c", winner: "w" });
    assert.equal((await jsonFileTuneStore(path).get("k"))?.winner, "w");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createTuneStore maps the tuneCache option and refuses anything else", () => {
  assert.equal(createTuneStore().description, "localStorage");
  assert.equal(createTuneStore("memory").description, "memory");
  assert.equal(createTuneStore("/tmp/x/tune.json").description, "/tmp/x/tune.json");
  assert.equal(createTuneStore(new URL("file:///tmp/y.json")).description, "/tmp/y.json");
  assert.throws(() => createTuneStore(42 as unknown as string), /tuneCache must be/);
});

Deno.test("the device key changes with the adapter, the code-generation limits and the runtime, not other limits", () => {
  const base = {
    vendor: "nvidia",
    architecture: "hopper",
    description: "NVIDIA H200",
    limits: { maxComputeWorkgroupStorageSize: 49152, maxTextureDimension2D: 16384 },
    runtime: "deno 2.9.6",
  };
  const k = tuneDeviceKey(base);
  assert.ok(k.startsWith("nvidia/hopper/NVIDIA H200#"));
  assert.equal(tuneDeviceKey({ ...base, limits: { ...base.limits, maxTextureDimension2D: 8192 } }), k);
  assert.notEqual(tuneDeviceKey({ ...base, limits: { ...base.limits, maxComputeWorkgroupStorageSize: 32768 } }), k);
  assert.notEqual(tuneDeviceKey({ ...base, runtime: "deno 2.9.7" }), k);
  assert.notEqual(tuneDeviceKey({ ...base, description: "NVIDIA H100" }), k);
});
