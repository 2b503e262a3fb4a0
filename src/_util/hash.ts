/**
 * A stable 64-bit FNV-1a hash of a string, as 16 hex digits. Used for kernel
 * ids that must be identical across runs and processes.
 */
export function stableHash(text: string): string {
  // Two 32-bit FNV-1a lanes with different offsets give 64 bits of spread.
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0xcbf29ce4 | 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193) ^ (h2 >>> 15);
  }
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
}
