/** Rounds `n` up to a multiple of `alignment` (a positive integer). */
export function alignUp(n: number, alignment: number): number {
  const r = n % alignment;
  return r === 0 ? n : n + alignment - r;
}

/** Rounds `n` down to a multiple of `alignment` (a positive integer). */
export function alignDown(n: number, alignment: number): number {
  return n - (n % alignment);
}

/** Bytes needed after `size` to reach the next multiple of `alignment`. */
export function paddingFor(size: number, alignment: number): number {
  return alignUp(size, alignment) - size;
}
