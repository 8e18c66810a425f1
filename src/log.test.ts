import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, logFormatFor } from './log.js';

function capture(format: 'json' | 'pretty') {
  const out: string[] = [];
  const logger = createLogger({ level: 'debug', format, write: (line) => out.push(line) });
  return { logger, out };
}

test('pretty: one readable line per event, fields as key=value, bindings included', () => {
  const { logger, out } = capture('pretty');
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
  const { logger, out } = capture('pretty');
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
  const { logger, out } = capture('json');
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
