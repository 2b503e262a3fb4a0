/**
 * Human-readable figures: byte counts in binary units, and percentages. Every
 * byte count the runtime prints (memory usage and reports, log lines, error
 * messages, labels of GPU objects) goes through {@linkcode formatBytes}.
 *
 * @module
 */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** Options of {@linkcode formatBytes}. */
export interface FormatBytesOptions {
  /**
   * Never round: a count that no binary unit states exactly (to two decimals)
   * prints as its number of bytes ("1048577 B"), as error messages need.
   * @default false
   */
  readonly exact?: boolean;
}

/**
 * Formats a byte count in binary units (B, KiB, MiB, GiB, TiB; powers of
 * 1024), in the largest unit the count reaches. A count that unit states
 * exactly in at most two decimals prints without trailing zeros ("256 B",
 * "1 MiB", "1.5 MiB"); any other is rounded, with its trailing zeros kept so
 * that it reads as rounded ("1.00 MiB" for one byte over 1 MiB, "12.3 MiB"):
 * two decimals below 10, one from 10.
 *
 * @example Usage
 * ```ts
 * import { formatBytes } from "@denogpu/runtime";
 * console.log(formatBytes(1 << 20)); // "1 MiB"
 * console.log(formatBytes(1.5 * (1 << 20))); // "1.5 MiB"
 * console.log(formatBytes((1 << 20) + 1)); // "1.00 MiB"
 * console.log(formatBytes((1 << 20) + 1, { exact: true })); // "1048577 B"
 * ```
 *
 * @param bytes The count.
 * @param options Whether to refuse rounding.
 * @returns The count with its unit.
 */
export function formatBytes(bytes: number, options: FormatBytesOptions = {}): string {
  if (!Number.isFinite(bytes)) return `${bytes} B`;
  const sign = bytes < 0 ? "-" : "";
  const abs = Math.abs(bytes);
  let u = 0;
  while (u < UNITS.length - 1 && abs >= 1024 ** (u + 1)) u++;
  const v = abs / 1024 ** u;
  if (Number.isInteger(v * 100)) return `${sign}${Number(v.toFixed(2))} ${UNITS[u]}`;
  if (options.exact) return `${bytes} B`;
  let unit = u;
  let text = v.toFixed(v < 10 ? 2 : 1);
  if (Number(text) >= 1024 && unit < UNITS.length - 1) { // 1023.96 KiB reads "1.00 MiB", not "1024.0 KiB"
    unit++;
    text = (v / 1024).toFixed(2);
  }
  return `${sign}${text} ${UNITS[unit]}`;
}

/** Formats a ratio `part / whole` as a percentage with one decimal, or "n/a". */
export function formatPercent(part: number, whole: number): string {
  return whole === 0 ? "n/a" : `${((part / whole) * 100).toFixed(1)}%`;
}

/**
 * {@linkcode formatBytes} that never rounds (`exact: true`), for error
 * messages, log lines and labels: "1 MiB", "1.5 KiB", "1048577 B".
 *
 * @param bytes The count.
 * @returns The count with its unit.
 */
export function formatBytesExact(bytes: number): string {
  return formatBytes(bytes, { exact: true });
}
