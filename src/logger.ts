/**
 * `ServerLogger`: levelled logging for compilation, memory, profiling and
 * launches, written to stderr, stdout or a file.
 *
 * Levels come from client options, or from the `DENOGPU_LOG` environment
 * variable when options give none. A subsystem that is off costs one boolean
 * test on the hot path; messages are only built when their level is on.
 *
 * `DENOGPU_LOG` syntax: comma-separated `key=value` pairs.
 * - `compilation=basic|full`, `memory=basic|full`, `launches=basic|full`,
 *   `profiling=minimal|basic|medium|full`;
 * - `all=basic|full` sets every subsystem;
 * - `file=/path/to.log` (appends), `stdout`, or `stderr` (the default) picks the sink;
 * - the bare values `1`/`true` mean `all=basic`, and `0`/`false` mean off;
 * - a key's value `disabled`, `0`, `false` or `off` turns that subsystem off
 *   (`all=disabled` turns everything off).
 * Keys and levels are read case-insensitively. A part that is none of these
 * is left out, and a client built from the environment names it in one
 * warning line on stderr.
 *
 * @module
 */

import { oneOf } from "./_util/one_of.ts";
import { readGrantedEnv } from "./_util/granted_env.ts";
import { describe } from "./_util/describe.ts";

/** Level of a subsystem: off, the essentials, or everything. */
export type LogLevel = "disabled" | "basic" | "full";

/**
 * Level of profiling logs: `minimal` logs each launch's name; `basic` and up
 * also record per-kernel device time in profiles and print a summary at `sync()`.
 */
export type ProfileLogLevel = "disabled" | "minimal" | "basic" | "medium" | "full";

/** Where log lines go. */
export type LogSink = "stderr" | "stdout" | { file: string; append?: boolean };

/** Logger options (part of `createClient` options). */
export interface LoggerOptions {
  /** Kernel compilation: `basic` names each compiled kernel, `full` adds its id and source. */
  compilation?: LogLevel;
  /** Memory: `basic` logs pool growth, spills and cleanups, `full` every reservation. */
  memory?: LogLevel;
  /** Launches and streams: `basic` logs submits and cross-stream flushes, `full` every launch. */
  launches?: LogLevel;
  /** Profiling. */
  profiling?: ProfileLogLevel;
  /**
   * Autotune: `basic` logs each decision, `full` each candidate's samples too.
   * A dropped candidate is logged as a warning whatever the level.
   */
  autotune?: LogLevel;
  /** Where lines go. @default "stderr" */
  sink?: LogSink;
}

/** The environment variable read when no logger options are given. */
export const LOG_ENV_VAR = "DENOGPU_LOG";

const encoder = new TextEncoder();

function isOn(level: LogLevel | undefined): boolean {
  return level !== undefined && level !== "disabled";
}

/**
 * Levelled logger of one server (CubeCL's `ServerLogger`): compilation,
 * memory, launches and profiling, each off, `basic` or `full`, to stderr,
 * stdout or a file. `createClient({ logger })` sets it, or `DENOGPU_LOG` when
 * env access is granted.
 *
 * @example Log compilations to stdout
 * ```ts
 * import { ServerLogger } from "@denogpu/runtime/server";
 *
 * const logger = new ServerLogger({ compilation: "basic", sink: "stdout" });
 * console.log(logger.compilation, logger.memory); // true false
 * logger.log("compilation", "compiled add"); // "[denogpu compilation] compiled add"
 * ```
 */
export class ServerLogger {
  /** Compilation logging on. */
  readonly compilation: boolean;
  /** Compilation logging includes ids and sources. */
  readonly compilationFull: boolean;
  /** Memory logging on. */
  readonly memory: boolean;
  /** Memory logging includes every reservation. */
  readonly memoryFull: boolean;
  /** Launch/stream logging on. */
  readonly launches: boolean;
  /** Launch logging includes every launch. */
  readonly launchesFull: boolean;
  /** Profiling level. */
  readonly profiling: ProfileLogLevel;
  /** Autotune decisions logged (warnings always are). */
  readonly autotune: boolean;
  #sink: LogSink;
  #summary = new Map<string, { count: number; nanos: number }>();
  #appended = false;

  /**
   * Creates the instance.
   *
   * @param options Levels and sink; omitted levels are off.
   * @throws {TypeError} When a level or the sink is not one of its values.
   */
  constructor(options: LoggerOptions = {}) {
    checkOptions(options);
    this.compilation = isOn(options.compilation);
    this.compilationFull = options.compilation === "full";
    this.memory = isOn(options.memory);
    this.memoryFull = options.memory === "full";
    this.launches = isOn(options.launches);
    this.launchesFull = options.launches === "full";
    this.profiling = options.profiling ?? "disabled";
    this.autotune = isOn(options.autotune);
    this.#sink = options.sink ?? "stderr";
  }

  /** True when any subsystem logs. */
  get enabled(): boolean {
    return this.compilation || this.memory || this.launches || this.profiling !== "disabled";
  }

  /**
   * Builds a logger from `DENOGPU_LOG`. The variable is read only when env
   * access to it is already granted (`--allow-env`, or
   * `--allow-env=DENOGPU_LOG`): asking would stop `deno run` at a prompt in
   * a terminal. Without that permission, or when the variable is unset,
   * everything is off.
   *
   * @returns The logger.
   */
  static fromEnv(): ServerLogger {
    const value = readGrantedEnv(LOG_ENV_VAR);
    const ignored: string[] = [];
    const logger = new ServerLogger(
      parseLogEnv(value, { onIgnored: (part, why) => ignored.push(`"${part}" (${why})`) }),
    );
    if (ignored.length > 0) {
      try {
        Deno.stderr.writeSync(encoder.encode(`[denogpu] ${LOG_ENV_VAR}: ignored ${ignored.join(", ")}\n`));
      } catch {
        // no stderr: nothing else to tell
      }
    }
    return logger;
  }

  /**
   * Writes one line, prefixed by the subsystem.
   *
   * @param subsystem `compilation`, `memory`, `launch`, `profile` or `stream`.
   * @param message The message.
   */
  log(subsystem: string, message: string): void {
    const line = `[denogpu ${subsystem}] ${message}\n`;
    const sink = this.#sink;
    try {
      if (sink === "stderr") Deno.stderr.writeSync(encoder.encode(line));
      else if (sink === "stdout") Deno.stdout.writeSync(encoder.encode(line));
      else {
        const append = this.#appended || (sink.append ?? true);
        Deno.writeTextFileSync(sink.file, line, { append });
        this.#appended = true;
      }
    } catch {
      // Logging must never break the runtime (for example without write permission).
    }
  }

  /**
   * Adds a profiled kernel duration to the summary.
   *
   * @param name Kernel name.
   * @param nanos Device time in nanoseconds.
   */
  registerProfiled(name: string, nanos: number): void {
    const e = this.#summary.get(name);
    if (e === undefined) this.#summary.set(name, { count: 1, nanos });
    else {
      e.count++;
      e.nanos += nanos;
    }
  }

  /**
   * Returns, and clears, the aggregated table of profiled kernels: name, total
   * time, count and share. Empty when nothing was profiled.
   *
   * @returns The table, or "" when empty.
   */
  profileSummary(): string {
    if (this.#summary.size === 0) return "";
    const rows = [...this.#summary].sort((a, b) => b[1].nanos - a[1].nanos);
    this.#summary.clear();
    const total = rows.reduce((s, [, v]) => s + v.nanos, 0);
    const lines = rows.map(([name, v]) =>
      `  ${name.padEnd(32)} ${(v.nanos / 1e6).toFixed(3).padStart(10)} ms ${String(v.count).padStart(7)}× ${
        (total ? (v.nanos / total) * 100 : 0).toFixed(1).padStart(5)
      }%`
    );
    return `profile summary (${(total / 1e6).toFixed(3)} ms):\n${lines.join("\n")}`;
  }
}

/** Values of a `DENOGPU_LOG` key that turn its subsystem off. */
const OFF_VALUES = ["disabled", "0", "false", "off"];
const LOG_LEVELS: readonly LogLevel[] = ["disabled", "basic", "full"];
const PROFILE_LEVELS: readonly ProfileLogLevel[] = ["disabled", "minimal", "basic", "medium", "full"];

/** Throws a `TypeError` naming the option unless `options` holds known levels and a sink lines can go to. */
function checkOptions(options: unknown): void {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`createClient: logger must be an object of levels and a sink, got ${describe(options)}`);
  }
  const l = options as LoggerOptions;
  oneOf("logger.compilation", l.compilation, LOG_LEVELS);
  oneOf("logger.memory", l.memory, LOG_LEVELS);
  oneOf("logger.launches", l.launches, LOG_LEVELS);
  oneOf("logger.profiling", l.profiling, PROFILE_LEVELS);
  oneOf("logger.autotune", l.autotune, LOG_LEVELS);
  const sink: unknown = l.sink;
  if (sink === undefined || sink === "stderr" || sink === "stdout") return;
  if (sink === null || typeof sink !== "object") {
    throw new TypeError(`createClient: logger.sink must be "stderr", "stdout" or { file }, got ${describe(sink)}`);
  }
  const { file, append } = sink as { file: unknown; append?: unknown };
  if (typeof file !== "string" || file === "") {
    throw new TypeError(`createClient: logger.sink.file must be a non-empty path, got ${describe(file)}`);
  }
  if (append !== undefined && typeof append !== "boolean") {
    throw new TypeError(`createClient: logger.sink.append must be a boolean, got ${describe(append)}`);
  }
}

/** Options of `parseLogEnv`. */
export interface ParseLogEnvOptions {
  /**
   * Called with each comma-separated part that was left out (an unknown key,
   * or a value the key does not take) and why.
   */
  onIgnored?: (part: string, reason: string) => void;
}

/** Values that turn a subsystem on at `basic`: the bare key, `1` and `true`. */
const ON_VALUES = ["", "1", "true"];

/**
 * Parses a `DENOGPU_LOG` value into logger options. Keys and levels are read
 * case-insensitively (a file path keeps its case). A part it cannot read is
 * left out rather than guessed, and handed to `onIgnored`; a client built from
 * the environment writes those parts to stderr in one warning line.
 *
 * @example Usage
 * ```ts
 * import { parseLogEnv } from "./logger.ts";
 * console.log(parseLogEnv("memory=full,file=/tmp/gpu.log"));
 * // { memory: "full", sink: { file: "/tmp/gpu.log", append: true } }
 * parseLogEnv("lanches=full", { onIgnored: (part, why) => console.log(part, why) });
 * // lanches=full unknown key
 * ```
 *
 * @param value The variable's value, or undefined when unset.
 * @param options `onIgnored`, told about each part left out.
 * @returns The options it describes.
 */
export function parseLogEnv(value: string | undefined, options: ParseLogEnvOptions = {}): LoggerOptions {
  const out: LoggerOptions = {};
  if (value === undefined || value === "" || value === "0" || value === "false") return out;
  const ignore = options.onIgnored ?? (() => {});
  /** The level `v` names, or undefined when it names none. */
  const level = (v: string): LogLevel | undefined =>
    v === "full" || v === "basic"
      ? v
      : OFF_VALUES.includes(v)
      ? "disabled"
      : ON_VALUES.includes(v)
      ? "basic"
      : undefined;
  for (const part of value.split(",").map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    const key = (eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    const raw = eq < 0 ? "" : part.slice(eq + 1); // everything after the first "=" (a path may hold more)
    const v = raw.toLowerCase();
    switch (key) {
      case "1":
      case "true":
      case "all": {
        const l = level(v);
        if (l === undefined) ignore(part, `${key} takes basic, full or an off value`);
        else {out.compilation =
            out.memory =
            out.launches =
            out.profiling =
            out.autotune =
              l;}
        break;
      }
      case "compilation":
      case "memory":
      case "launches":
      case "autotune": {
        const l = level(v);
        if (l === undefined) ignore(part, `${key} takes basic, full or an off value`);
        else out[key] = l;
        break;
      }
      case "profiling": {
        const l = PROFILE_LEVELS.includes(v as ProfileLogLevel) ? v as ProfileLogLevel : level(v);
        if (l === undefined) ignore(part, "profiling takes minimal, basic, medium, full or an off value");
        else out.profiling = l;
        break;
      }
      case "file":
        if (raw !== "") out.sink = { file: raw, append: true }; // `file=` alone keeps the default sink
        break;
      case "stdout":
      case "stderr":
        if (raw === "") out.sink = key;
        else ignore(part, `${key} takes no value`);
        break;
      default:
        ignore(part, "unknown key");
    }
  }
  return out;
}
