/**
 * Asserts an internal precondition. A failure here is a bug in
 * `@denogpu/runtime`, never a user mistake.
 */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) {
    throw new Error(`@denogpu/runtime internal error (please report): ${message}`);
  }
}
