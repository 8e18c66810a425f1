import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKey, SealedValueError, SecretBox } from '../store/secret-box.js';
import { openPoolSettings, sealPoolSettings } from './pool-secrets.js';

const box = new SecretBox(generateKey());
const ADDRESS = 'https://user:pw-1@rpc.example/v3/0123456789abcdef0123456789abcdef?apikey=k-2&chain=main';
const WS = 'wss://rpc.example/ws?key=k-3';

test('what the API masks is sealed; the clear copy is the masked form; opening gives everything back', () => {
  const settings = {
    description: 'd',
    origins: [
      { name: 'keyed', address: ADDRESS, ws_address: WS, header: { Host: ['rpc.example'], 'X-Api-Key': ['k-4'] } },
      { name: 'plain', address: '10.0.0.5:8545', header: {} },
    ],
  };
  const stored = sealPoolSettings(settings, box, 'p1');
  const text = JSON.stringify(stored);
  for (const secret of ['pw-1', '0123456789abcdef0123456789abcdef', 'k-2', 'k-3', 'k-4']) {
    assert.ok(!text.includes(secret), secret);
  }
  assert.deepEqual(stored.origins[0], {
    name: 'keyed',
    address: 'https://***:***@rpc.example/v3/***?apikey=***&chain=***',
    ws_address: 'wss://rpc.example/ws?key=***',
    header: { Host: ['rpc.example'], 'X-Api-Key': ['***'] },
  });
  assert.deepEqual(stored.origins[1], settings.origins[1], 'an origin without secrets stays as it is');
  assert.deepEqual(openPoolSettings(JSON.parse(text), box, 'p1'), settings);
  assert.throws(() => openPoolSettings(JSON.parse(text), box, 'p2'), SealedValueError, 'bound to its pool');
  const fewer = { ...JSON.parse(text), origins: [stored.origins[0]] };
  assert.throws(() => openPoolSettings(fewer, box, 'p1'), SealedValueError, 'the parts must fit the origins');
});

test('settings without secrets are stored unchanged, and settings written before sealing read as they are', () => {
  const settings = { origins: [{ name: 'a', address: 'http://127.0.0.1:8545', header: { Host: ['h'] } }] };
  assert.equal(sealPoolSettings(settings, box, 'p1'), settings);
  const legacy = { origins: [{ name: 'a', address: ADDRESS, header: {} }] };
  assert.deepEqual(openPoolSettings(legacy, box, 'p1'), legacy);
});
