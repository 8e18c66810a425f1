/**
 * Structured logs, one line per event on stderr (stdout stays free for CLI output such as tokens).
 * Never pass secrets in fields; URLs go through model/origin-address.ts `maskAddress` first.
 *
 * Formats (`log_format`): `json` — one JSON object per line (`time`, `level`, `msg`, then the fields);
 * `pretty` — one readable line per event for a terminal: `HH:MM:SS.mmm LEVEL msg key=value …` (UTC
 * time of day; values with spaces or quotes JSON-quoted; an Error as `Name: message (code)` with its
 * causes after `<-`, and no stack: the JSON format keeps those). Unset, the format is `pretty` when
 * stderr is a terminal, else `json` (`logFormatFor`).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

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
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const bindings = options.bindings ?? {};
  const pretty = options.format === 'pretty';
  const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[level] < threshold) return;
    const record = { time: new Date().toISOString(), level, msg, ...bindings, ...fields };
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
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
  }
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

/** `Name: message (code) <- Cause: message …`, down the `cause` chain (cycles cut). */
function errorChain(err: Error): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  let at: unknown = err;
  while (at !== undefined && !seen.has(at)) {
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
