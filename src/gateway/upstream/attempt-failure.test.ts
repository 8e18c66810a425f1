import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AttemptFailure, classify } from './attempt-failure.js';

test('classify names its failure and keeps the error it came from as the cause', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  const failure = classify(refused, 1000);
  assert.ok(failure instanceof AttemptFailure);
  assert.equal(failure.name, 'AttemptFailure');
  assert.equal(failure.kind, 'connect');
  assert.equal(failure.message, 'cannot connect (ECONNREFUSED)');
  assert.equal(failure.cause, refused);

  const timeout = Object.assign(new Error('the origin did not answer in time'), { code: 'ORIGIN_HEADERS_TIMEOUT' });
  assert.equal(classify(timeout, 1000).cause, timeout);
  assert.equal(classify(timeout, 1000, true).kind, 'busy');
  const broken = new Error('socket hang up');
  assert.equal(classify(broken, 1000).cause, broken);
});
