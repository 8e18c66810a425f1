/**
 * Structured logs, one line per event on stderr (stdout stays free for CLI output such as tokens).
 * Never pass secrets in fields; URLs go through model/origin-address.ts `maskAddress` first.
 *
 * Formats (`log_format`): `json` — one JSON object per line (`time`, `level`, `msg`, then the fields);
 * `pretty` — one readable line per event for a terminal: `HH:MM:SS.mmm LEVEL msg key=value …` (UTC
 * time of day; values with spaces or quotes JSON-quoted; an Error as `Name: message (code)` with its
 * causes after `<-`, and no stack: the JSON format keeps those). Unset, the format is `pretty` when
 * stderr is a terminal, else `json` (`logFormatFor`).
 *
 * An Error anywhere in the fields is written as `{ name, message, code?, stack, cause? }`, its `cause`
 * written the same way down to MAX_CAUSE_DEPTH (5) levels (deeper causes, and cycles, end in
 * `{ truncated: true }`), so a wrapped failure reaches the log with every stack it passed through. A
 * cause that is not an Error is written as it is.
 */
import { type Clock, systemClock } from './clock.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** How many links of an error's `cause` chain are written below the error itself. */
export const MAX_CAUSE_DEPTH = 5;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Default `json`. */
  format?: LogFormat;
  write?: (line: string) => void;
  bindings?: Record<string, unknown>;
  /** Where each line's `time` comes from (default: the system clock). */
  clock?: Clock;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const bindings = options.bindings ?? {};
  const pretty = options.format === 'pretty';
  const clock = options.clock ?? systemClock;
  const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[level] < threshold) return;
    const record = { time: new Date(clock.now()).toISOString(), level, msg, ...bindings, ...fields };
    write(pretty ? prettyLine(record) : `${JSON.stringify(record, errorReplacer)}\n`);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => createLogger({ ...options, bindings: { ...bindings, ...more } }),
  };
}

export const silentLogger: Logger = createLogger({ level: 'silent' });

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return loggedError(value, 0, new Set());
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** The configured format, else `pretty` on a terminal and `json` anywhere else (files, pipes, journald). */
export function logFormatFor(
  configured: LogFormat | undefined,
  stderr: { isTTY?: boolean } = process.stderr,
): LogFormat {
  return configured ?? (stderr.isTTY === true ? 'pretty' : 'json');
}

/** One event as one readable line (see the header). */
function prettyLine(record: Record<string, unknown> & { time: string; level: string; msg: string }): string {
  const { time, level, msg, ...fields } = record;
  let line = `${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${oneLine(msg)}`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    line += ` ${key}=${prettyValue(value)}`;
  }
  return `${line}\n`;
}

const BARE = /^[^\s"'=]+$/;

function prettyValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(errorChain(value));
  if (typeof value === 'string') return BARE.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value, errorReplacer) ?? String(value);
}

/** `Name: message (code) <- Cause: message …`, down the `cause` chain (cycles cut, MAX_CAUSE_DEPTH deep). */
function errorChain(err: Error): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  let at: unknown = err;
  while (at !== undefined && !seen.has(at) && parts.length <= MAX_CAUSE_DEPTH) {
    seen.add(at);
    if (!(at instanceof Error)) {
      parts.push(String(at));
      break;
    }
    const code = (at as { code?: unknown }).code;
    parts.push(`${at.name}: ${oneLine(at.message)}${code === undefined ? '' : ` (${String(code)})`}`);
    at = at.cause;
  }
  return parts.join(' <- ');
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}

/** An Error as a plain object with its stack, and its cause chain to MAX_CAUSE_DEPTH (see the header). */
function loggedError(err: Error, depth: number, seen: Set<Error>): Record<string, unknown> {
  seen.add(err);
  const code = (err as { code?: unknown }).code;
  const out: Record<string, unknown> = { name: err.name, message: err.message };
  if (code !== undefined) out.code = code;
  if (err.stack !== undefined) out.stack = err.stack;
  if (!('cause' in err) || err.cause === undefined) return out;
  const cause = err.cause;
  if (!(cause instanceof Error)) out.cause = cause;
  else if (depth >= MAX_CAUSE_DEPTH || seen.has(cause)) out.cause = { truncated: true };
  else out.cause = loggedError(cause, depth + 1, seen);
  return out;
}
