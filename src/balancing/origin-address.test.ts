import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isMasked, maskAddress } from './origin-address.js';

test('addresses without secrets are returned exactly as written', () => {
  for (const address of ['127.0.0.1:8545', 'node-a', 'http://10.0.0.5:8545', 'https://rpc.example/v1/mainnet']) {
    assert.equal(maskAddress(address), address);
  }
});

test('credentials, query values, fragments and key-like path segments are masked', () => {
  assert.equal(maskAddress('https://user:pw@rpc.example/'), 'https://***:***@rpc.example/');
  assert.equal(maskAddress('https://rpc.example/rpc?apikey=s3cret&x=1'), 'https://rpc.example/rpc?apikey=***&x=***');
  assert.equal(
    maskAddress('https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef'),
    'https://mainnet.infura.io/v3/***',
  );
  assert.equal(maskAddress('https://x.example/AbCdEfGhIjKlMnOpQrStUvWxYz012345_-'), 'https://x.example/***');
  assert.ok(isMasked(maskAddress('https://user@rpc.example/')));
  assert.ok(!maskAddress('https://u:topsecret@h/?k=topsecret').includes('topsecret'));
});
