/**
 * Where an all-reduce with `reduceOn: "auto"` reduces: on the host, or on the
 * device of rank 0 (uploads and a second device wait against the host's
 * additions). The crossover depends on the machine, so a communicator
 * measures both: per power-of-two size class from 4 MiB, its first slot
 * reduces on the host, its second on the device, and later ones where the
 * running average of whole all-reduces (all joined to all delivered) was
 * shorter. Smaller all-reduces, `f16` and single-device sets reduce on the
 * host. Both sites add in rank order, so sums come out the same either way.
 *
 * @module
 */

import type { ReduceSite, SiteChoice } from "./collective_parts.ts";

/** Bytes per participant from which `auto` measures the device site too. */
export const MEASURE_FROM_BYTES = 4 * 1024 * 1024;

/** The running averages of one size class, in milliseconds (null: not measured yet). */
interface ClassTimes {
  host: number | null;
  device: number | null;
}

/** The site choices and measurements of one communicator. */
export class SitePicker {
  #times = new Map<number, ClassTimes>();

  /**
   * The site of a new slot.
   *
   * @param choice The first participant's choice.
   * @param participants Devices in the set.
   * @returns Where the slot reduces.
   */
  pick(choice: SiteChoice, participants: number): ReduceSite {
    if (participants < 2 || choice.dtype === "f16") return "host";
    if (choice.reduceOn !== "auto") return choice.reduceOn;
    if (choice.bytes < MEASURE_FROM_BYTES) return "host";
    const t = this.#times.get(sizeClass(choice.bytes));
    if (t === undefined || t.host === null) return "host";
    if (t.device === null) return "device";
    return t.device < t.host ? "device" : "host";
  }

  /**
   * Records how long an all-reduce took.
   *
   * @param site Where it reduced.
   * @param bytes Bytes per participant.
   * @param ms From the last participant joining to the last result written.
   */
  record(site: ReduceSite, bytes: number, ms: number): void {
    if (bytes < MEASURE_FROM_BYTES) return;
    const key = sizeClass(bytes);
    const t = this.#times.get(key) ?? { host: null, device: null };
    const old = t[site];
    t[site] = old === null ? ms : (old + ms) / 2;
    this.#times.set(key, t);
  }

  /**
   * The running averages of the size class of `bytes`, for reports and tests.
   *
   * @param bytes Bytes per participant.
   * @returns Milliseconds per site, null where not measured.
   */
  times(bytes: number): Readonly<ClassTimes> {
    return this.#times.get(sizeClass(bytes)) ?? { host: null, device: null };
  }
}

function sizeClass(bytes: number): number {
  return Math.ceil(Math.log2(Math.max(1, bytes)));
}
