/**
 * A stable 64-bit hash of a string, for checksums and device keys that must
 * be identical across processes and runs (not cryptographic).
 *
 * @module
 */

/**
 * Hashes `text` with two 32-bit FNV-1a lanes of different offsets.
 *
 * @param text The text.
 * @returns 16 hex digits.
 */
export function hash64(text: string): string {
  let a = 0x811c9dc5 | 0;
  let b = 0x050c5d1f | 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
