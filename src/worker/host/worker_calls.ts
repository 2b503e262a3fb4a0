/**
 * The calls a worker client makes and awaits, run in the worker on its
 * server: draining calls (flush, sync, read, profiles, capture boundaries)
 * and the memory reports and pool installation, whose answers only the
 * worker knows. Each returns the value to post back and the buffers to
 * transfer with it.
 *
 * @module
 */

import type { Handle } from "../../contract/handle.ts";
import type { BufferBinding, CopyDescriptor } from "../../contract/types.ts";
import type { MemoryConfiguration } from "../../contract/memory_types.ts";
import { reduceOnHost } from "../../collective/host_reduce.ts";
import type { ProfilingToken } from "../../ids.ts";
import { combineUsage } from "../../memory/memory_usage.ts";
import { discardProfile } from "../../stream/stream_profiles.ts";
import type { WebGpuServer } from "../../server/webgpu_server.ts";
import { encodeError, encodeValue } from "../wire/error_codec.ts";
import type { CallPayload, WireBinding, WireBytes, WireDuration } from "../wire/protocol.ts";

/** A call's result: what to post back, and the buffers to transfer with it. */
export interface CallResult {
  /** The value (cloneable). */
  readonly value: unknown;
  /** Buffers moved, not copied. */
  readonly transfer: ArrayBuffer[];
}

/** Settles a promise into plain data. */
async function settled(p: Promise<unknown>): Promise<WireDuration["ticks"]> {
  try {
    return { ok: true, value: await p };
  } catch (e) {
    return { ok: false, error: encodeError(e) };
  }
}

/**
 * Runs one call on the server.
 *
 * @param server The worker's server.
 * @param call The method and its arguments.
 * @param binding Resolves a binding by handle id (throws for an id the worker does not hold).
 * @returns The result to post back.
 */
export async function runCall(
  server: WebGpuServer,
  call: CallPayload,
  binding: (b: WireBinding, where: string) => Handle | BufferBinding,
): Promise<CallResult> {
  switch (call.method) {
    case "flush":
      await server.flush(call.stream);
      return { value: undefined, transfer: [] };
    case "sync": {
      await server.sync(call.stream);
      const logger = server.logger();
      if (logger.profiling !== "disabled") {
        const summary = logger.profileSummary();
        if (summary) logger.log("profile", summary);
      }
      return { value: undefined, transfer: [] };
    }
    case "read": {
      const descriptors: CopyDescriptor[] = call.descriptors.map((d, i) => ({
        binding: binding(d, `read[${i}]`),
        shape: d.shape,
        strides: d.strides,
        elemSize: d.elemSize,
      }));
      if (call.into !== undefined) {
        await server.readInto(descriptors, call.stream, [new Uint8Array(call.into)], true);
        return { value: undefined, transfer: [] };
      }
      // Checked on the main thread, at the client's door: the server trusts it.
      const out = await server.read(descriptors, call.stream, true);
      // Each result moves with its buffer; one that views part of a buffer (which the
      // server may keep, or share between results) is copied first.
      const moved = new Set<ArrayBuffer>();
      const value: WireBytes[] = out.map((b) => {
        const whole = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && !moved.has(b.buffer);
        const own = whole ? b : b.slice();
        moved.add(own.buffer);
        return { buffer: own.buffer, offset: 0, length: own.byteLength };
      });
      return { value, transfer: [...moved] };
    }
    case "startProfile":
      return { value: { ...await server.startProfile(call.stream) }, transfer: [] };
    case "endProfile": {
      const duration = await server.endProfile(call.stream, call.token as ProfilingToken);
      const [ticks, dispatches] = await Promise.all([settled(duration.ticks), settled(duration.dispatches)]);
      const value: WireDuration = { method: duration.method, ticks, dispatches };
      return { value: encodeValue(value), transfer: [] };
    }
    case "discardProfile": {
      const token = call.token as ProfilingToken;
      discardProfile(server.stream(token.stream), token);
      return { value: undefined, transfer: [] };
    }
    case "reduceShared": {
      // Views of shared memory: the reduction only reads and writes elements, whatever the buffer's kind.
      const range = call.inputs.map((x) =>
        new Uint8Array(x.buffer, x.offset + call.from, call.to - call.from) as unknown as Uint8Array<ArrayBuffer>
      );
      const into = reduceOnHost(range, call.dtype, call.op); // into range[0], in place
      if (into.buffer !== range[0]!.buffer) range[0]!.set(into); // an unaligned input was copied first
      return { value: undefined, transfer: [] };
    }
    case "fence":
      return { value: undefined, transfer: [] };
    case "stats":
      throw new TypeError("stats: answered by the worker's host");
    case "simulateLoss":
      // Tests: the device goes away as a lost one does, without the server being told first.
      server.device.destroy();
      return { value: undefined, transfer: [] };
    case "beginCapture":
      await server.beginCapture(call.stream);
      return { value: undefined, transfer: [] };
    case "endCapture":
      return { value: await server.endCapture(call.stream, call.sameAsWarmup ?? false), transfer: [] };
    case "memoryUsage":
      return {
        value: combineUsage(...server.streamIds().map((id) => server.memoryUsage(id))),
        transfer: [],
      };
    case "memoryReport":
      return { value: server.memoryReport(call.stream), transfer: [] };
    case "installMemoryPools":
      server.installMemoryPools(call.config as MemoryConfiguration, call.stream);
      return { value: undefined, transfer: [] };
  }
}
