/**
 * Stream ids map onto stream slots.
 *
 * @module
 */

/**
 * The slot a stream id uses: `id % maxStreams` (the division skipped for ids
 * below it, the common case on the launch path).
 *
 * @param id A stream id (a non-negative safe integer).
 * @param maxStreams Number of slots.
 * @returns The slot index.
 */
export function slotOf(id: number, maxStreams: number): number {
  return id < maxStreams ? id : id % maxStreams;
}
