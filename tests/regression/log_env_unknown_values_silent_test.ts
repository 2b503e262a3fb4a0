/**
 * Found by the profiling and logging audit: `DENOGPU_LOG` took any value it
 * did not know as `basic` (`launches=FULL`, `memory=verbose`, `all=medium`)
 * and dropped unknown keys (`lanches=full`) without a word, so a typo gave a
 * different log from the one asked for and nothing said so. Values are now
 * read case-insensitively, and every part the parser cannot read is left out
 * and reported: `parseLogEnv` hands it to `onIgnored`, and a client built
 * from the environment writes one warning line to stderr.
 */

import assert from "node:assert/strict";
import { parseLogEnv } from "../../src/logger.ts";
import { ServerLogger } from "../../server.ts";

/** Parses `value`, collecting the ignored parts. */
function parse(value: string) {
  const ignored: string[] = [];
  const options = parseLogEnv(value, { onIgnored: (part) => ignored.push(part) });
  return { options, ignored };
}

Deno.test("DENOGPU_LOG reads levels case-insensitively", () => {
  assert.deepEqual(parse("launches=FULL,Memory=Basic,profiling=Medium").options, {
    launches: "full",
    memory: "basic",
    profiling: "medium",
  });
});

Deno.test("DENOGPU_LOG leaves out and reports unknown keys and values instead of reading them as basic", () => {
  const { options, ignored } = parse("lanches=full,memory=verbose,all=medium,compilation=full,profiling=loud");
  assert.deepEqual(options, { compilation: "full" });
  assert.deepEqual(ignored, ["lanches=full", "memory=verbose", "all=medium", "profiling=loud"]);
});

Deno.test("DENOGPU_LOG reports nothing for what it documents", () => {
  const { ignored } = parse(
    "1,all=full,compilation,memory=off,launches=1,profiling=minimal,file=/tmp/a=b.log,stdout,stderr,compilation=false",
  );
  assert.deepEqual(ignored, []);
});

Deno.test("a logger built from DENOGPU_LOG warns once on stderr about the parts it ignored", () => {
  const before = Deno.env.get("DENOGPU_LOG");
  const stderr = Deno.stderr;
  const write = stderr.writeSync;
  let written = "";
  Deno.env.set("DENOGPU_LOG", "lanches=full,compilation=disabled,memory=LOUD");
  stderr.writeSync = (p: Uint8Array) => {
    written += new TextDecoder().decode(p);
    return p.byteLength;
  };
  try {
    const logger = ServerLogger.fromEnv();
    assert.equal(logger.enabled, false, "what it could read is applied");
  } finally {
    stderr.writeSync = write;
    if (before === undefined) Deno.env.delete("DENOGPU_LOG");
    else Deno.env.set("DENOGPU_LOG", before);
  }
  const lines = written.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, written);
  assert.match(lines[0]!, /^\[denogpu\] DENOGPU_LOG: ignored "lanches=full" \(unknown key\), "memory=LOUD" \(/);
});
