/**
 * The open profiles of one stream, shared by both timing methods: tokens,
 * the `not-registered` check, and failing every open profile when the stream
 * drains errors.
 *
 * @module
 */

import { ProfileError, type ServerError } from "../errors.ts";
import { allocateTokenId, type ProfilingToken, type StreamId } from "../ids.ts";

/** Open profiles of one stream, each with what its profiler noted at its start. */
export class OpenProfiles<T> {
  #stream: StreamId;
  #open = new Map<number, { start: T; errors: ServerError[] | null }>();

  /**
   * Creates the set.
   *
   * @param stream The stream slot the tokens name.
   */
  constructor(stream: StreamId) {
    this.#stream = stream;
  }

  /** Number of profiles open. */
  get size(): number {
    return this.#open.size;
  }

  /** What each open profile noted at its start. */
  *starts(): IterableIterator<T> {
    for (const p of this.#open.values()) yield p.start;
  }

  /**
   * Opens a profile.
   *
   * @param start What the profiler notes at its start.
   * @returns The token.
   */
  open(start: T): ProfilingToken {
    const token = { id: allocateTokenId(), stream: this.#stream };
    this.#open.set(token.id, { start, errors: null });
    return token;
  }

  /**
   * Whether a token names a profile open in this set.
   *
   * @param token The token.
   * @returns True until the profile is closed.
   */
  has(token: ProfilingToken): boolean {
    return this.#open.has(token.id);
  }

  /**
   * Closes a profile.
   *
   * @param token The token from `open`.
   * @returns What was noted at its start.
   * @throws {ProfileError} `not-registered` for an unknown or already ended token;
   * `unknown` when errors were drained while it was open.
   */
  close(token: ProfilingToken): T {
    const open = this.#open.get(token.id);
    if (open === undefined) {
      throw new ProfileError("not-registered", `endProfile: token ${token.id} is unknown or was already ended`);
    }
    this.#open.delete(token.id);
    if (open.errors !== null) {
      throw new ProfileError(
        "unknown",
        `endProfile: errors were drained while profile ${token.id} was open:\n${
          open.errors.map((e) => `  [${e.name}] ${e.message}`).join("\n")
        }`,
        { cause: open.errors[0] },
      );
    }
    return open.start;
  }

  /** Marks every open profile as failed with the drained errors. */
  fail(errors: readonly ServerError[]): void {
    for (const p of this.#open.values()) p.errors = (p.errors ?? []).concat(errors);
  }
}
