/**
 * Turns of the event loop for code that otherwise awaits only microtasks.
 *
 * Deno notices that a timer inside one of its pending operations has run out
 * (the 10 ms sleep of a `mapAsync`, say) only when its event loop waits for
 * something. A message posted to oneself is delivered without waiting, so it
 * lets such operations finish in none of its turns; these turns make the loop
 * wait.
 *
 * @module
 */

/** What `parkTurn` digests: enough (~0.05–0.1 ms of hashing) that the event loop finds it not done yet, and waits. */
const PARK_BYTES = new Uint8Array(64 * 1024);
const nothing = (): void => {};

/**
 * A light turn that waits (~0.1–0.2 ms): a SHA-1 digest of 64 KiB, which Deno
 * computes on its blocking thread pool while the event loop waits for it (no
 * permission needed). A digest done before the event loop looks makes it
 * wait for nothing: of 149 turns in a loop of early maps, a 4-byte digest let
 * expired leftover maps settle in 129 and a 64 KiB one in 137 (a zero-delay
 * timer in all, at 1.3 ms a turn), so a caller repeats one that settled none.
 */
export function parkTurn(): Promise<void> {
  return crypto.subtle.digest("SHA-1", PARK_BYTES).then(nothing);
}

/** A turn that waits for a timer (1–2 ms): every operation whose timer has run out finishes in it. */
export function timerTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
