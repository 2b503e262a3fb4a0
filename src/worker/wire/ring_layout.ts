/**
 * The layout of a worker client's command ring: the words of its control
 * block, the record operations and how a record's first word packs its
 * operation, length and flags. Both sides of the ring (the client on the main
 * thread, the server in its Worker) read this file and nothing else to agree
 * on the format.
 *
 * A record is one or more consecutive 64-byte slots (16 u32 words); its first
 * word says how many. Every field is a u32; a number that may pass 2^32 (a
 * stream id, a byte size or offset) takes two words, low then high.
 *
 * @module
 */

/** Words per slot: a slot is 64 bytes, one cache line. */
export const SLOT_WORDS = 16;

/** Index, in the control block's `Int32Array`, of the producer's position (slots written, mod 2^32). */
export const HEAD = 0;
/** Index of the consumer's position (slots consumed, mod 2^32). */
export const TAIL = 16;
/** Index of the consumer's sleep flag: 1 while it waits on `HEAD`. */
export const SLEEP = 32;
/** Index of the producer's request for a `space` message (it holds spilled records). */
export const WANT_SPACE = 48;
/** Index of the reader's loop state, for diagnostics (see `LoopState`). */
export const LOOP_STATE = 56;
/** Index of the payload id the reader waits for while its state is `stalled`. */
export const STALLED_ON = 57;
/** Index of the id of the last payload the reader received. */
export const LAST_PAYLOAD = 58;
/** Length of the control block, in 32-bit words (four cache lines). */
export const CONTROL_WORDS = 64;

/**
 * Where the reader's loop is (the word at `LOOP_STATE`): a diagnostic for a
 * stuck client; `exiting` (set just before the Worker closes itself) is what
 * the main thread waits for when it ends a client at `unload`.
 */
export const LoopState = { running: 1, sleeping: 2, yielding: 3, stalled: 4, closed: 5, exiting: 6 } as const;

/** Operation of a record (the low 8 bits of its first word). */
export const Op = {
  /** Skips the slots up to the end of the ring. */
  pad: 0,
  /** A kernel launch. */
  launch: 1,
  /** Reserve memory for a handle id. */
  alloc: 2,
  /** The last main-thread reference of a handle id is gone. */
  free: 3,
  /** A kernel's source, sent once, by payload. */
  kernel: 4,
  /** Bytes into memory, inline or by payload. */
  write: 5,
  /** A call whose arguments and reply travel by message. */
  call: 6,
  /** Replay a graph. */
  replay: 7,
  /** Destroy a graph. */
  graphDestroy: 8,
  /** Arm graph capture on a stream. */
  graphPrepare: 9,
  /** Disarm a stream's capture. */
  graphAbort: 10,
  /** Open (+1) or close (-1) a dry-run window. */
  dryRun: 11,
  /** Switch a stream's allocation mode. */
  allocationMode: 12,
  /** Free what can be freed on every stream. */
  memoryCleanup: 13,
  /** Destroy the server, then end the worker. */
  destroy: 14,
  /** Reserve an indirect count (12 bytes from the count pool) for a handle id. */
  allocCount: 15,
} as const;

/** A record operation. */
export type OpCode = typeof Op[keyof typeof Op];

/** Flag of a launch: `skip` mode. */
export const LAUNCH_SKIP = 1 << 16;
/** Flag of a launch: the count is indirect (a binding follows the buffers). */
export const LAUNCH_INDIRECT = 1 << 17;
/** Flag of a launch or write: bindings carry offsets (views). */
export const HAS_VIEWS = 1 << 18;
/** Flag of a launch: the info words travel by payload (too many to inline). */
export const INFO_PAYLOAD = 1 << 19;
/** Flag of a write: the bytes are inline, after the fixed fields. */
export const WRITE_INLINE = 1 << 16;

/** Info word kinds (bits 20–21 of a launch's first word): how the caller typed them. */
export const INFO_NONE = 0;
/** Info given as a `Uint32Array`. */
export const INFO_U32 = 1;
/** Info given as an `Int32Array`. */
export const INFO_I32 = 2;
/** Info given as a `Float32Array`. */
export const INFO_F32 = 3;

/** Fixed words of a launch record before its bindings (the last: info length, or the info's payload id). */
export const LAUNCH_FIXED = 9;
/** Fixed words of a write record before its inline bytes. */
export const WRITE_FIXED = 10;
/** Bytes a write carries inline at most; larger writes travel by payload. */
export const WRITE_INLINE_MAX = 1024;
/** Slots a record takes at most; a launch that would need more sends its info words by payload. */
export const RECORD_MAX_SLOTS = 32;

/**
 * The first word of a record.
 *
 * @param op The operation.
 * @param slots Slots the record takes (1–255).
 * @param flags Flag bits (above bit 15).
 * @returns The word.
 */
export function header(op: OpCode, slots: number, flags = 0): number {
  return (op | (slots << 8) | flags) >>> 0;
}

/** The operation of a record's first word. */
export function opOf(word: number): number {
  return word & 0xff;
}

/** The slots of a record's first word. */
export function slotsOf(word: number): number {
  return (word >>> 8) & 0xff;
}

/** Slots needed for `words` words. */
export function slotsFor(words: number): number {
  return Math.ceil(words / SLOT_WORDS);
}

/** The low word of a non-negative safe integer. */
export function lo(n: number): number {
  return n >>> 0;
}

/** The high word of a non-negative safe integer. */
export function hi(n: number): number {
  return Math.floor(n / 4294967296) >>> 0;
}

/** Joins a low and a high word. */
export function join(low: number, high: number): number {
  return low + high * 4294967296;
}
