import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOriginAddress, originUrl } from './origin-url.js';

describe('originUrl', () => {
  it('keeps full URLs, including path and query', () => {
    assert.equal(originUrl('https://rpc.example/v3/key?x=1').href, 'https://rpc.example/v3/key?x=1');
    assert.equal(originUrl('http://127.0.0.1:9545').href, 'http://127.0.0.1:9545/');
  });

  it('reads a bare host[:port] as http://host:port/', () => {
    assert.equal(originUrl('127.0.0.1:9545').href, 'http://127.0.0.1:9545/');
    assert.equal(originUrl('node.internal').href, 'http://node.internal/');
  });

  it('refuses other schemes', () => {
    assert.equal(isOriginAddress('ws://127.0.0.1:8546'), false);
    assert.equal(isOriginAddress('ftp://x'), false);
    assert.equal(isOriginAddress('http://'), false);
  });
});
