/**
 * Contract under test: a JSON file tune store finds its folder, lock file and
 * temporary files with the platform's path rules (issue 32.6): Windows paths
 * (drive, UNC, either slash, drive-relative) and POSIX ones, and `file:` URLs
 * of both. The path logic is pure, so both platforms are checked here.
 */

import assert from "node:assert/strict";
import { fileUrlToPath, tuneFilePaths } from "../../src/tune/_tune_file_paths.ts";
import { jsonFileTuneStore } from "../../tune.ts";

Deno.test("a Windows drive path keeps its lock and temporary files beside it and its folder is the drive folder", () => {
  const p = tuneFilePaths("C:\\x\\tune.json", "win32");
  assert.equal(p.file, "C:\\x\\tune.json");
  assert.equal(p.dir, "C:\\x", "the folder is found with backslashes, not taken as '.'");
  assert.equal(p.lock, "C:\\x\\tune.json.lock");
  assert.equal(p.tmp(42, 7), "C:\\x\\tune.json.42.7.tmp");
});

Deno.test("a Windows path with forward or mixed slashes finds its folder", () => {
  assert.equal(tuneFilePaths("C:/cache/tune.json", "win32").dir, "C:/cache");
  assert.equal(tuneFilePaths("C:\\cache/sub\\tune.json", "win32").dir, "C:\\cache/sub");
});

Deno.test("a UNC path's folder is the share's folder, and a file at the share's root has the share as folder", () => {
  const p = tuneFilePaths("\\\\server\\share\\cache\\tune.json", "win32");
  assert.equal(p.dir, "\\\\server\\share\\cache");
  assert.equal(p.lock, "\\\\server\\share\\cache\\tune.json.lock");
  assert.equal(tuneFilePaths("\\\\server\\share\\tune.json", "win32").dir, "\\\\server\\share\\");
});

Deno.test("relative and drive-relative Windows paths keep their files relative", () => {
  assert.deepEqual(
    [tuneFilePaths("tune.json", "win32").dir, tuneFilePaths("tune.json", "win32").lock],
    [".", "tune.json.lock"],
  );
  assert.equal(tuneFilePaths("C:tune.json", "win32").dir, "C:");
  assert.equal(tuneFilePaths("C:tune.json", "win32").lock, "C:tune.json.lock");
});

Deno.test("POSIX paths: a backslash is part of a name, not a separator", () => {
  assert.equal(tuneFilePaths("/tmp/x/tune.json", "posix").dir, "/tmp/x");
  assert.equal(tuneFilePaths("/tune.json", "posix").dir, "/");
  assert.equal(tuneFilePaths("tune.json", "posix").dir, ".");
  assert.equal(tuneFilePaths("a\\b.json", "posix").dir, ".");
  assert.equal(tuneFilePaths("/tmp/x/tune.json", "posix").lock, "/tmp/x/tune.json.lock");
});

Deno.test("a path that names a folder is refused on both platforms", () => {
  for (
    const [path, platform] of [["C:\\x\\", "win32"], ["C:/x/", "win32"], ["C:", "win32"], ["/tmp/x/", "posix"], [
      ".",
      "posix",
    ], ["..", "posix"]] as const
  ) {
    assert.throws(() => tuneFilePaths(path, platform), /names a folder/, `${path} (${platform})`);
  }
});

Deno.test("file: URLs become the platform's paths: drive letters and hosts on Windows, plain paths on POSIX", () => {
  assert.equal(fileUrlToPath(new URL("file:///C:/x%20y/tune.json"), "win32"), "C:\\x y\\tune.json");
  assert.equal(fileUrlToPath(new URL("file://server/share/tune.json"), "win32"), "\\\\server\\share\\tune.json");
  assert.equal(fileUrlToPath(new URL("file://localhost/C:/tune.json"), "win32"), "C:\\tune.json");
  assert.equal(fileUrlToPath(new URL("file:///tmp/x%20y/tune.json"), "posix"), "/tmp/x y/tune.json");
  assert.equal(fileUrlToPath(new URL("file://localhost/tmp/tune.json"), "posix"), "/tmp/tune.json");
  const p = tuneFilePaths(new URL("file:///C:/cache/tune.json"), "win32");
  assert.deepEqual([p.file, p.dir, p.lock], ["C:\\cache\\tune.json", "C:\\cache", "C:\\cache\\tune.json.lock"]);
});

Deno.test("a string starting with file:// is taken as a URL", () => {
  assert.equal(tuneFilePaths("file:///C:/cache/tune.json", "win32").dir, "C:\\cache");
  assert.equal(tuneFilePaths("file:///tmp/cache/tune.json", "posix").file, "/tmp/cache/tune.json");
});

Deno.test("file: URLs with no local path are refused: a host on POSIX, no drive on Windows, an escaped separator", () => {
  assert.throws(() => fileUrlToPath(new URL("file://server/share/tune.json"), "posix"), /no host/);
  assert.throws(() => fileUrlToPath(new URL("file:///x/tune.json"), "win32"), /drive or a host/);
  assert.throws(() => fileUrlToPath(new URL("file:///tmp/a%2Fb.json"), "posix"), /escaped path separator/);
  assert.throws(() => fileUrlToPath(new URL("file:///C:/a%5Cb.json"), "win32"), /escaped path separator/);
  assert.throws(() => tuneFilePaths(new URL("https://example.com/tune.json"), "posix"), /expected a file: URL/);
  assert.throws(() => tuneFilePaths("", "posix"), /non-empty string or a file: URL/);
});

Deno.test("the store writes through a file: URL into a folder it creates, leaving only the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = new URL(`file://${dir}/a%20folder/tune.json`);
    const store = jsonFileTuneStore(url);
    assert.equal(store.description, `${dir}/a folder/tune.json`);
    await store.set("k", { checksum: "c", winner: "w" });
    assert.equal((await jsonFileTuneStore(`${dir}/a folder/tune.json`).get("k"))?.winner, "w");
    assert.deepEqual([...Deno.readDirSync(`${dir}/a folder`)].map((e) => e.name), ["tune.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
