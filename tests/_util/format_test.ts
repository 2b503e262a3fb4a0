/**
 * Contract under test: every byte count the runtime prints is in binary units
 * (issue 32.6): a 1 MiB page prints "1 MiB", not "1.05 MB"; exact counts print
 * without decimals or trailing zeros, rounded ones keep theirs, and the exact
 * form used by error messages never rounds.
 */

import assert from "node:assert/strict";
import { formatBytes } from "../../src/_util/format.ts";
import { resolveMemoryConfiguration } from "../../src/memory/memory_config.ts";
import {
  formatMemoryReport,
  formatMemoryUsage,
  type MemoryPoolReport,
  type MemoryReport,
  ResourceLimitError,
} from "../../mod.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

Deno.test("a count below 1 KiB prints in bytes, without decimals", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(256), "256 B");
  assert.equal(formatBytes(1000), "1000 B", "1000 B is not a kilobyte: no decimal units");
  assert.equal(formatBytes(1023), "1023 B");
});

Deno.test("powers of 1024 print as whole binary units", () => {
  assert.equal(formatBytes(KiB), "1 KiB");
  assert.equal(formatBytes(MiB), "1 MiB");
  assert.equal(formatBytes(16 * MiB), "16 MiB");
  assert.equal(formatBytes(GiB), "1 GiB");
  assert.equal(formatBytes(1024 * GiB), "1 TiB");
  assert.equal(formatBytes(2048 * 1024 * GiB), "2048 TiB", "TiB is the largest unit");
});

Deno.test("a count a unit states exactly in two decimals prints them without trailing zeros", () => {
  assert.equal(formatBytes(1.5 * MiB), "1.5 MiB");
  assert.equal(formatBytes(2.25 * GiB), "2.25 GiB");
  assert.equal(formatBytes(1536), "1.5 KiB");
});

Deno.test("a rounded count keeps its trailing zeros, so it never reads as exact", () => {
  assert.equal(formatBytes(MiB + 1), "1.00 MiB");
  assert.equal(formatBytes(1500), "1.46 KiB");
  assert.equal(formatBytes(Math.round(12.34 * MiB)), "12.3 MiB");
  assert.equal(formatBytes(150 * MiB + 1), "150.0 MiB");
  assert.equal(formatBytes(MiB - 1), "1.00 MiB", "1023.999 KiB rounds up into the next unit");
});

Deno.test("the exact form prints a count no unit states exactly as its bytes", () => {
  assert.equal(formatBytes(MiB + 1, { exact: true }), "1048577 B");
  assert.equal(formatBytes(1500, { exact: true }), "1500 B");
  assert.equal(formatBytes(256 * MiB, { exact: true }), "256 MiB");
  assert.equal(formatBytes(1.5 * KiB, { exact: true }), "1.5 KiB");
});

Deno.test("negative and non-finite counts keep their sign and value", () => {
  assert.equal(formatBytes(-2 * MiB), "-2 MiB");
  assert.equal(formatBytes(-1500), "-1.46 KiB");
  assert.equal(formatBytes(Infinity), "Infinity B");
});

Deno.test("formatMemoryUsage prints binary units: 1 MiB reserved reads 1 MiB", () => {
  const line = formatMemoryUsage({ numberAllocs: 2, bytesInUse: 768 * KiB, bytesPadding: 36, bytesReserved: MiB });
  assert.equal(line, "2 allocations, 768 KiB in use (75.0% of reserved), 36 B padding, 1 MiB reserved");
});

Deno.test("formatMemoryReport prints page sizes, slice limits and the largest allocation in binary units", () => {
  const usage = { numberAllocs: 1, bytesInUse: 64 * KiB, bytesPadding: 0, bytesReserved: MiB };
  const pool = (shape: MemoryPoolReport["shape"]): MemoryPoolReport => ({
    shape,
    usage,
    pages: 1,
    pagesPeak: 1,
    pagesUnmapped: 0,
    largestAlloc: 64 * KiB,
  });
  const report: MemoryReport = {
    dynamic: [
      pool({ kind: "sliced", pageSize: MiB, maxSliceSize: 64 * KiB, maxPoolSize: 16 * MiB }),
      pool({ kind: "exclusive", maxAllocSize: 128 * MiB }),
    ],
    persistent: pool({ kind: "persistent" }),
    counts: pool({ kind: "direct", reclaimAt: 1.5 * GiB }),
  };
  const text = formatMemoryReport(report);
  for (
    const part of [
      "sliced(page 1 MiB, slices ≤ 64 KiB, cap 16 MiB)",
      "exclusive(≤ 128 MiB)",
      "direct(reclaim at 1.5 GiB)",
      "largest 64 KiB",
      "1 MiB reserved",
    ]
  ) {
    assert.ok(text.includes(part), `${part} in:\n${text}`);
  }
  assert.doesNotMatch(text, /\b[KMGT]B\b/, "no decimal unit anywhere");
});

Deno.test("error messages name sizes in binary units, and exactly: a pool config error reads 3 MiB and 1048577 B", () => {
  const props = { maxPageSize: 1 << 27, alignment: 1, maxBufferSize: 2 * MiB };
  assert.throws(
    () => resolveMemoryConfiguration({ pools: [{ kind: "sliced", pageSize: 3 * MiB }] }, props),
    /pageSize 3 MiB is above the device's maxBufferSize 2 MiB/,
  );
  assert.throws(
    () => resolveMemoryConfiguration({ pools: [{ kind: "sliced", pageSize: MiB, maxSliceSize: MiB + 1 }] }, props),
    /maxSliceSize 1048577 B is larger than pageSize 1 MiB/,
  );
});

Deno.test("a byte limit's error names both sizes in binary units; a count limit's stays a plain number", () => {
  const bytes = new ResourceLimitError("buffer-size", "create", [300 * MiB], [256 * MiB], "maxBufferSize");
  assert.match(bytes.message, /requested 300 MiB exceeds the device limit maxBufferSize = 256 MiB/);
  const units = new ResourceLimitError("units", "k", [2048], [1024], "maxComputeInvocationsPerWorkgroup");
  assert.match(units.message, /requested 2048 exceeds the device limit maxComputeInvocationsPerWorkgroup = 1024/);
});
