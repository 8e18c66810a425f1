import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from './clock.js';
import { createLogger, logFormatFor, MAX_CAUSE_DEPTH } from './log.js';

function captureLines(format: 'json' | 'pretty') {
  const out: string[] = [];
  const logger = createLogger({ level: 'debug', format, write: (line) => out.push(line) });
  return { logger, out };
}

test('pretty: one readable line per event, fields as key=value, bindings included', () => {
  const { logger, out } = captureLines('pretty');
  logger.child({ part: 'gateway' }).warn('origin attempt failed', {
    pool: 'main',
    origin: 'o1',
    reason: 'no answer within 10000 ms',
    attempts: 2,
    skipped: undefined,
  });
  assert.equal(out.length, 1);
  assert.match(
    out[0] as string,
    /^\d\d:\d\d:\d\d\.\d{3} WARN {2}origin attempt failed part=gateway pool=main origin=o1 reason="no answer within 10000 ms" attempts=2\n$/,
  );
});

test('pretty: an error with its cause chain stays on one line; so do multi-line messages', () => {
  const { logger, out } = captureLines('pretty');
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  logger.error('store unreachable\nretrying', { err: new TypeError('could not open the store', { cause }) });
  assert.equal(out.length, 1);
  const line = out[0] as string;
  assert.equal(line.split('\n').length, 2, 'one line, then the newline');
  assert.match(line, / ERROR store unreachable retrying err=/);
  assert.match(
    line,
    /err="TypeError: could not open the store <- Error: connect ECONNREFUSED 127.0.0.1:5432 \(ECONNREFUSED\)"/,
  );
});

test('json stays one JSON object per line', () => {
  const { logger, out } = captureLines('json');
  logger.info('hello', { n: 1 });
  const record = JSON.parse(out[0] as string) as Record<string, unknown>;
  assert.equal(record.msg, 'hello');
  assert.equal(record.level, 'info');
  assert.equal(record.n, 1);
});

test('log_format unset: pretty on a terminal, json anywhere else; a configured format wins', () => {
  assert.equal(logFormatFor(undefined, { isTTY: true }), 'pretty');
  assert.equal(logFormatFor(undefined, { isTTY: false }), 'json');
  assert.equal(logFormatFor(undefined, {}), 'json');
  assert.equal(logFormatFor('json', { isTTY: true }), 'json');
  assert.equal(logFormatFor('pretty', { isTTY: false }), 'pretty');
});

/** An error as a log line holds it. */
interface Logged {
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
  cause?: Logged & { truncated?: boolean; status?: number };
}

function capture(): { errors: Logged[]; times: string[]; write: (line: string) => void } {
  const errors: Logged[] = [];
  const times: string[] = [];
  const write = (line: string): void => {
    const record = JSON.parse(line) as { err: Logged; time: string };
    errors.push(record.err);
    times.push(record.time);
  };
  return { errors, times, write };
}

test('an error with a two-level cause chain is logged with every stack', () => {
  const { errors, write } = capture();
  const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const middle = new Error('the origin did not answer', { cause: root });
  const top = new TypeError('forwarding failed', { cause: middle });
  createLogger({ write }).error('call failed', { err: top });

  const err = errors[0];
  assert.equal(err?.name, 'TypeError');
  assert.equal(err?.message, 'forwarding failed');
  assert.equal(err?.stack, top.stack);
  assert.match(err?.stack ?? '', /log\.test\.ts/);
  assert.equal(err?.cause?.message, 'the origin did not answer');
  assert.equal(err?.cause?.stack, middle.stack);
  assert.equal(err?.cause?.cause?.message, 'connect ECONNREFUSED 127.0.0.1:1');
  assert.equal(err?.cause?.cause?.code, 'ECONNREFUSED');
  assert.equal(err?.cause?.cause?.stack, root.stack);
  assert.equal(err?.cause?.cause?.cause, undefined);
});

test('the cause chain stops after MAX_CAUSE_DEPTH links, and a cycle ends at once', () => {
  const { errors, write } = capture();
  let err = new Error('level 0');
  for (let level = 1; level <= MAX_CAUSE_DEPTH + 3; level++) err = new Error(`level ${level}`, { cause: err });
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  a.cause = b;
  const logger = createLogger({ write });
  logger.error('deep', { err });
  logger.error('cycle', { err: a });

  let link = errors[0];
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) link = link?.cause;
  assert.equal(link?.message, 'level 3');
  assert.equal(typeof link?.stack, 'string', 'the deepest written link keeps its stack');
  assert.deepEqual(link?.cause, { truncated: true });
  assert.equal(errors[1]?.cause?.message, 'b');
  assert.deepEqual(errors[1]?.cause?.cause, { truncated: true });
});

test('a cause that is not an Error is written as it is; the time comes from the clock', () => {
  const { errors, times, write } = capture();
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  createLogger({ write, clock }).warn('odd', { err: new Error('wrapped', { cause: { status: 503 } }) });
  assert.equal(times[0], '2026-03-01T00:00:00.000Z');
  assert.deepEqual(errors[0]?.cause, { status: 503 });
});
