import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSecretHeader, maskHeaders, unmaskHeaders } from './header-secrets.js';

test('credential headers are masked; *** sent back keeps the stored value (named in kept), and only then', () => {
  const stored = { Host: ['rpc.example'], 'X-Api-Key': ['k1', 'k2'], Authorization: ['Bearer abc'] };
  const shown = maskHeaders(stored);
  assert.deepEqual(shown, { Host: ['rpc.example'], 'X-Api-Key': ['***', '***'], Authorization: ['***'] });
  for (const name of ['Cookie', 'x-auth-token', 'X-Client-Secret', 'Proxy-Authorization', 'X-Session-Id']) {
    assert.ok(isSecretHeader(name), name);
  }
  assert.ok(!isSecretHeader('Host') && !isSecretHeader('Accept'));
  assert.deepEqual(unmaskHeaders({ ...shown, 'x-api-key': ['***', 'new'] }, stored), {
    headers: {
      Host: ['rpc.example'],
      'X-Api-Key': ['k1', 'k2'],
      Authorization: ['Bearer abc'],
      'x-api-key': ['k1', 'new'],
    },
    kept: ['X-Api-Key', 'Authorization', 'x-api-key'],
  });
  assert.deepEqual(unmaskHeaders({ 'X-Api-Key': ['***', '***', '***'] }, stored), { missing: 'X-Api-Key' });
  assert.deepEqual(unmaskHeaders({ Authorization: ['***'] }, undefined), { missing: 'Authorization' });
  assert.deepEqual(
    unmaskHeaders({ Host: ['***'] }, { Host: ['h'] }),
    { missing: 'Host' },
    'only secret headers are masked',
  );
});
