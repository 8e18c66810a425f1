import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseResponseHead } from './response-head.js';

describe('response head: Retry-After', () => {
  it('is handed on raw when sent, whatever its case; absent otherwise', () => {
    assert.equal(
      parseResponseHead('HTTP/1.1 429 Too Many Requests\r\nRETRY-AFTER:  3 \r\nContent-Length: 0').retryAfter,
      '3',
    );
    const dated = 'HTTP/1.1 503 Service Unavailable\r\nRetry-After: Sun, 01 Mar 2026 12:00:30 GMT\r\nContent-Length: 0';
    assert.equal(parseResponseHead(dated).retryAfter, 'Sun, 01 Mar 2026 12:00:30 GMT');
    assert.equal(parseResponseHead('HTTP/1.1 200 OK\r\nContent-Length: 0').retryAfter, undefined);
  });
});
