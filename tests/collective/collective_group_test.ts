/**
 * Contract under test: the rendezvous without devices: participants with
 * host-byte parts (as a Worker-hosted device would bring) join slots in call
 * order, the slot runs once all have joined, and the host reduction keeps
 * the device's arithmetic.
 */

import assert from "node:assert/strict";
import { CollectiveError } from "../../src/errors.ts";
import { CollectiveGroup } from "../../src/collective/collective_group.ts";
import type { JoinRequest, ReducePart } from "../../src/collective/collective_parts.ts";
import type { DeviceId } from "../../src/contract/types.ts";
import { reduceOnHost } from "../../src/collective/host_reduce.ts";
import { sortDevices } from "../../src/collective/device_ids.ts";
import { MEASURE_FROM_BYTES, SitePicker } from "../../src/collective/site_picker.ts";
import { WaitGraph } from "../../src/collective/wait_graph.ts";

const devices = [{ typeId: 3, indexId: 0 }, { typeId: 3, indexId: 1 }];

/** An all-reduce request over host bytes; `out` receives what is delivered. */
function request(values: number[], out: Float32Array[], signature = "s", timeoutMs = 1000): JoinRequest {
  return {
    signature,
    what: `allReduce ${signature}`,
    timeoutMs,
    begin: (): ReducePart => ({
      kind: "all-reduce",
      dtype: "f32",
      op: "sum",
      site: "host",
      source: Promise.resolve(new Uint8Array(new Float32Array(values).buffer)),
      deliver: (result) => {
        out.push(new Float32Array(result.slice().buffer));
        return Promise.resolve();
      },
    }),
  };
}

Deno.test("the n-th call of each participant joins slot n, whatever order the participants call in", async () => {
  const group = new CollectiveGroup("cpu:0,cpu:1", devices);
  const got: Float32Array[][] = [[], []];
  const calls = [
    group.joinAllReduce(1, request([10], got[1]!)),
    group.joinAllReduce(1, request([20], got[1]!)),
    group.joinAllReduce(0, request([1], got[0]!)),
    group.joinAllReduce(0, request([2], got[0]!)),
  ];
  await Promise.all(calls);
  assert.deepEqual(got.map((g) => g.map((x) => x[0])), [[11, 22], [11, 22]]);
});

Deno.test("a slot whose participants disagree fails for both with mismatch, and the next slot runs", async () => {
  const group = new CollectiveGroup("cpu:0,cpu:1", devices);
  const got: Float32Array[] = [];
  const a = group.joinAllReduce(0, request([1], got, "f32 400 B"));
  const b = group.joinAllReduce(1, request([1], got, "f32 800 B"));
  await assert.rejects(a, (e: CollectiveError) => e.reason === "mismatch");
  await assert.rejects(b, (e: CollectiveError) => e.reason === "mismatch");
  await Promise.all([group.joinAllReduce(0, request([3], got)), group.joinAllReduce(1, request([4], got))]);
  assert.deepEqual(got.map((x) => x[0]), [7, 7]);
});

Deno.test("a participant missing from a timed-out slot joins the next one when another participant calls it in the same turn, else its call is refused as late", async () => {
  const group = new CollectiveGroup("cpu:0,cpu:1", devices);
  const got: Float32Array[] = [];
  await assert.rejects(
    group.joinAllReduce(0, request([1], got, "s", 10)),
    (e: CollectiveError) => e.reason === "timeout",
  );
  // Rank 1 never made the failed call: called in one turn, in either order, the next calls meet.
  await Promise.all([group.joinAllReduce(1, request([20], got)), group.joinAllReduce(0, request([2], got))]);
  await Promise.all([group.joinAllReduce(0, request([3], got)), group.joinAllReduce(1, request([30], got))]);
  assert.deepEqual(got.map((x) => x[0]), [22, 22, 33, 33]);
  // Rank 1 calls after slot 3 timed out, and nobody has called slot 4: its call was its late call for slot 3.
  await assert.rejects(group.joinAllReduce(0, request([4], got, "s", 10)), CollectiveError);
  await assert.rejects(
    group.joinAllReduce(1, request([40], got)),
    (e: CollectiveError) =>
      e.reason === "timeout" && /cpu:1 called after slot 3 of cpu:0,cpu:1 had failed/.test(e.message),
  );
  await Promise.all([group.joinAllReduce(0, request([5], got)), group.joinAllReduce(1, request([50], got))]);
  assert.deepEqual(got.slice(4).map((x) => x[0]), [55, 55]);
});

Deno.test("all-reduces of two communicators that wait for each other fail at once with one mismatch; waits that close no cycle keep waiting", async () => {
  const waits = new WaitGraph();
  const [d0, d1, d2] = [0, 1, 2].map((indexId) => ({ typeId: 3, indexId })) as [DeviceId, DeviceId, DeviceId];
  const pair = new CollectiveGroup("cpu:0,cpu:1", [d0, d1], { waits });
  const three = new CollectiveGroup("cpu:0,cpu:1,cpu:2", [d0, d1, d2], { waits });
  const a = pair.joinAllReduce(0, request([1], []));
  const b = three.joinAllReduce(1, request([2], []));
  const e = await a.then(() => null, (x: CollectiveError) => x);
  assert.equal(e?.reason, "mismatch");
  assert.equal(await b.then(() => null, (x) => x), e, "every participant of the cycle gets the same error");
  assert.match(e!.message, /cpu:0 called allReduce over cpu:0,cpu:1, waiting for cpu:1/);
  assert.match(e!.message, /cpu:1 called allReduce over cpu:0,cpu:1,cpu:2, waiting for cpu:0/);
  // Device 1 reduces with device 2 first, then with device 0: nobody waits for a device that waits for them.
  const other = new CollectiveGroup("cpu:1,cpu:2", [d1, d2], { waits });
  const got: Float32Array[] = [];
  const calls = [pair.joinAllReduce(0, request([1], got)), other.joinAllReduce(0, request([10], got))];
  calls.push(other.joinAllReduce(1, request([20], got)), pair.joinAllReduce(1, request([2], got)));
  await Promise.all(calls);
  assert.deepEqual(got.map((x) => x[0]).sort((x, y) => x! - y!), [3, 3, 30, 30]);
});

Deno.test("closing the group fails waiting slots with device-lost and refuses later calls", async () => {
  const group = new CollectiveGroup("cpu:0,cpu:1", devices);
  const waiting = group.joinAllReduce(0, request([1], []));
  group.close(devices[1]!, new Error("gone"));
  await assert.rejects(waiting, (e: CollectiveError) => e.reason === "device-lost" && e.culprit === "cpu:1");
  await assert.rejects(group.joinAllReduce(0, request([1], [])), CollectiveError);
});

Deno.test("a part failing before the result exists fails every participant, naming its device", async () => {
  const group = new CollectiveGroup("cpu:0,cpu:1", devices);
  const broken: JoinRequest = {
    ...request([1], []),
    begin: () => ({
      kind: "all-reduce",
      dtype: "f32",
      op: "sum",
      site: "host",
      source: Promise.reject(new Error("read failed")),
      deliver: () => Promise.resolve(),
    }),
  };
  const a = group.joinAllReduce(0, request([1], []));
  const b = group.joinAllReduce(1, broken);
  await assert.rejects(a, (e: CollectiveError) => e.reason === "device-error" && e.culprit === "cpu:1");
  await assert.rejects(b, (e: CollectiveError) => e.reason === "device-error");
});

Deno.test("the host reduction rounds f32 after each addition, wraps integers and truncates integer means", () => {
  const f = (xs: number[]) => new Uint8Array(new Float32Array(xs).buffer);
  const big = 2 ** 24;
  assert.deepEqual([...new Float32Array(reduceOnHost([f([big]), f([1]), f([1])], "f32", "sum").buffer)], [big]);
  const i = (xs: number[]) => new Uint8Array(new Int32Array(xs).buffer);
  assert.deepEqual([...new Int32Array(reduceOnHost([i([2 ** 31 - 1, -7]), i([1, 0])], "i32", "sum").buffer)], [
    -(2 ** 31),
    -7,
  ]);
  assert.deepEqual([...new Int32Array(reduceOnHost([i([-7, 7]), i([0, 0])], "i32", "mean").buffer)], [-3, 3]);
  assert.deepEqual([...new Int32Array(reduceOnHost([i([-7, 7]), i([3, 9])], "i32", "min").buffer)], [-7, 7]);
  assert.throws(() => reduceOnHost([i([1]), i([1, 2])], "i32", "sum"), RangeError);
});

Deno.test("a device set in any order, with repeats, names one sorted communicator", () => {
  const a = sortDevices([{ typeId: 3, indexId: 2 }, { typeId: 3, indexId: 0 }, { typeId: 3, indexId: 2 }]);
  assert.equal(a.key, "cpu:0,cpu:2");
  assert.equal(a.devices.length, 2);
});

Deno.test("auto reduces small all-reduces on the host, and measures both sites once per size class before picking the faster", () => {
  const picker = new SitePicker();
  const big = { reduceOn: "auto", bytes: 8 * 1024 * 1024, dtype: "f32" } as const;
  assert.equal(picker.pick({ ...big, bytes: MEASURE_FROM_BYTES - 4 }, 4), "host");
  assert.equal(picker.pick({ ...big, dtype: "f16" }, 4), "host");
  assert.equal(picker.pick(big, 1), "host", "a single device has nothing to upload");
  assert.equal(picker.pick({ ...big, reduceOn: "device" }, 2), "device");
  assert.equal(picker.pick(big, 2), "host");
  picker.record("host", big.bytes, 40);
  assert.equal(picker.pick(big, 2), "device");
  picker.record("device", big.bytes, 30);
  assert.equal(picker.pick(big, 2), "device");
  picker.record("device", big.bytes - 4, 70); // same size class: the average becomes 50
  assert.deepEqual(picker.times(big.bytes), { host: 40, device: 50 });
  assert.equal(picker.pick(big, 2), "host");
  assert.equal(picker.pick({ ...big, bytes: 64 * 1024 * 1024 }, 2), "host", "another size class starts afresh");
});

Deno.test("the first participant of a slot fixes its site for everyone, and the communicator records the time", async () => {
  const group = new CollectiveGroup("cpu:0,cpu:1", devices);
  const bytes = MEASURE_FROM_BYTES;
  const sites: string[] = [];
  const req = (): JoinRequest => ({
    signature: "s",
    what: "allReduce",
    timeoutMs: 1000,
    site: { reduceOn: "auto", bytes, dtype: "u32" },
    begin: (site) => {
      sites.push(site);
      return {
        kind: "all-reduce",
        dtype: "u32",
        op: "sum",
        site,
        source: Promise.resolve(new Uint8Array(bytes)),
        deliver: () => Promise.resolve(),
        reduceHere: () => Promise.resolve(new Uint8Array(bytes)),
      };
    },
  });
  await Promise.all([group.joinAllReduce(0, req()), group.joinAllReduce(1, req())]);
  await new Promise((r) => setTimeout(r, 0)); // the time is recorded once every result is written
  await Promise.all([group.joinAllReduce(0, req()), group.joinAllReduce(1, req())]);
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(sites, ["host", "host", "device", "device"]);
  const times = group.sites.times(bytes);
  assert.ok(times.host !== null && times.device !== null);
});
