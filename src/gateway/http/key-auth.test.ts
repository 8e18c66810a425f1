import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../../errors/base.js';
import { keyDigest, StaticKeyTable } from '../../model/gateway-keys.js';
import { ApiKeys } from './api-keys.js';
import { GatewayAuth } from './key-auth.js';

const VALUE = 'swk_0123456789abcdefghijABCDEFGHIJ0123456789';
const LIMITED = 'swk_limitedlimitedlimitedlimitedlimited0000';
const STATIC = 'static-key-0123456789';
const ID = 'a'.repeat(32);
const LIMITED_ID = 'b'.repeat(32);

function table(): StaticKeyTable {
  return new StaticKeyTable({
    version: '1',
    keys: [
      { id: ID, digest: keyDigest(VALUE), networks: null, rate_limit: null, daily_quota: null },
      { id: LIMITED_ID, digest: keyDigest(LIMITED), networks: ['sepolia'], rate_limit: null, daily_quota: null },
    ],
  });
}

function refused(fn: () => unknown): SwitchyardError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('GatewayAuth (static keys, gateway keys, require_key)', () => {
  it('keys optional: a call without a key is anonymous', () => {
    const auth = new GatewayAuth({ staticKeys: undefined, table: table(), requireKey: false });
    assert.equal(auth.authenticate(undefined, '/v1/sepolia', 'sepolia'), undefined);
    // Another Authorization scheme presents no key.
    assert.equal(auth.authenticate('Basic dXNlcjpwdw==', '/v1/sepolia', 'sepolia'), undefined);
  });

  it('a gateway key (Bearer or ?key=) authenticates as its id', () => {
    const auth = new GatewayAuth({ staticKeys: undefined, table: table(), requireKey: false });
    assert.equal(auth.authenticate(`Bearer ${VALUE}`, '/v1/sepolia', 'sepolia'), ID);
    assert.equal(auth.authenticate(undefined, `/v1/sepolia?key=${VALUE}`, 'sepolia'), ID);
  });

  it('an unknown presented key is 401 / -32003 even when keys are optional, and the message does not echo it', () => {
    const auth = new GatewayAuth({ staticKeys: undefined, table: table(), requireKey: false });
    const err = refused(() => auth.authenticate('Bearer swk_notakeynotakeynotakey', '/v1/sepolia', 'sepolia'));
    assert.equal(err.code, 'GATEWAY_UNAUTHORIZED');
    assert.equal(err.httpStatus, 401);
    assert.equal(err.spec.rpc, -32003);
    assert.ok(!err.message.includes('swk_notakey'));
  });

  it('a key used outside its networks is 403 / -32003', () => {
    const auth = new GatewayAuth({ staticKeys: undefined, table: table(), requireKey: false });
    assert.equal(auth.authenticate(`Bearer ${LIMITED}`, '/v1/sepolia', 'sepolia'), LIMITED_ID);
    const err = refused(() => auth.authenticate(`Bearer ${LIMITED}`, '/v1/holesky', 'holesky'));
    assert.equal(err.code, 'KEY_NETWORK_FORBIDDEN');
    assert.equal(err.httpStatus, 403);
    assert.equal(err.spec.rpc, -32003);
  });

  it('require_key: no key is 401; a gateway key or a static key passes', () => {
    const auth = new GatewayAuth({ staticKeys: new ApiKeys([STATIC]), table: table(), requireKey: true });
    assert.equal(refused(() => auth.authenticate(undefined, '/v1/sepolia', 'sepolia')).httpStatus, 401);
    // A static key's identity is derived from its digest, never the key itself.
    assert.equal(
      auth.authenticate(`Bearer ${STATIC}`, '/v1/sepolia', 'sepolia'),
      `static:${keyDigest(STATIC).slice(0, 32)}`,
    );
    assert.equal(auth.authenticate(`Bearer ${VALUE}`, '/v1/sepolia', 'sepolia'), ID);
  });

  it('static api_keys alone still require a key, as before', () => {
    const auth = new GatewayAuth({ staticKeys: new ApiKeys([STATIC]), table: undefined, requireKey: false });
    assert.equal(refused(() => auth.authenticate(undefined, '/v1/sepolia', 'sepolia')).httpStatus, 401);
    assert.equal(refused(() => auth.authenticate(`Bearer ${VALUE}`, '/v1/sepolia', 'sepolia')).httpStatus, 401);
  });

  it('a key removed from the table is refused from the next call on', () => {
    const keys = table();
    const auth = new GatewayAuth({ staticKeys: undefined, table: keys, requireKey: false });
    assert.equal(auth.authenticate(`Bearer ${VALUE}`, '/v1/sepolia', 'sepolia'), ID);
    keys.replace({ version: '2', keys: [] });
    assert.equal(refused(() => auth.authenticate(`Bearer ${VALUE}`, '/v1/sepolia', 'sepolia')).httpStatus, 401);
  });
});
