import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AddressError,
  destinationOf,
  isMasked,
  maskAddress,
  normaliseAddress,
  originTarget,
  unmaskAddress,
  WS_SCHEMES,
} from './origin-address.js';

const KEY = '0123456789abcdef0123456789abcdef';

describe('normaliseAddress', () => {
  it('accepts every supported form and stores one canonical spelling', () => {
    const table: Array<[string, string]> = [
      ['127.0.0.1:8545', '127.0.0.1:8545'],
      ['node-a', 'node-a'],
      ['Node_A.Internal:8545', 'node_a.internal:8545'],
      ['[::1]:8545', '[::1]:8545'],
      ['[0:0:0:0:0:0:0:1]:8545', '[::1]:8545'],
      ['127.0.0.1:80', '127.0.0.1'],
      ['http://127.0.0.1:9545', 'http://127.0.0.1:9545'],
      ['http://127.0.0.1:9545/', 'http://127.0.0.1:9545/'],
      ['HTTP://RPC.Example:80/v1', 'http://rpc.example/v1'],
      ['https://rpc.example:443', 'https://rpc.example'],
      ['https://rpc.example:8443/a/../b', 'https://rpc.example:8443/b'],
      [`https://mainnet.infura.io/v3/${KEY}`, `https://mainnet.infura.io/v3/${KEY}`],
      ['http://h?x=1', 'http://h?x=1'],
      ['http://h/?x=1', 'http://h/?x=1'],
      ['http://h/rpc?', 'http://h/rpc'],
      ['http://apiuser:PASS@127.0.0.1:9/v3/K?apikey=K', 'http://apiuser:PASS@127.0.0.1:9/v3/K?apikey=K'],
      ['http://user@h', 'http://user@h'],
      ['http://:pw@h', 'http://:pw@h'],
      ['http://us%20er:p%40ss@h/', 'http://us%20er:p%40ss@h/'],
      ['http://h/a%20b', 'http://h/a%20b'],
      ['http://[2001:db8::1]:8545/x', 'http://[2001:db8::1]:8545/x'],
    ];
    for (const [input, canonical] of table) {
      assert.equal(normaliseAddress(input), canonical, input);
      assert.equal(normaliseAddress(canonical), canonical, `idempotent: ${canonical}`);
    }
  });

  it('refuses every other form with a message saying what to fix (never the address itself)', () => {
    const table: Array<[string, RegExp]> = [
      ['', /empty/],
      ['apiuser:PASS@127.0.0.1:9/v3/KEY?apikey=K', /credentials .* need a scheme/],
      ['user:pw@host', /credentials .* need a scheme/],
      ['host:8545/v3/KEY', /path or query needs a scheme/],
      ['host:8545?apikey=K', /path or query needs a scheme/],
      ['host/', /path or query needs a scheme/],
      ['host#x', /path or query needs a scheme/],
      ['ws://127.0.0.1:8546', /scheme must be http or https/],
      ['ftp://x', /scheme must be http or https/],
      ['file:///etc/passwd', /scheme must be http or https/],
      ['http://', /needs a host/],
      ['http:///x', /needs a host/],
      ['http://user@/x', /needs a host/],
      ['http://h/x#frag', /fragment/],
      ['http://h:0', /port must be 1-65535/],
      ['http://h:65536', /port must be 1-65535/],
      ['h:99999', /port must be 1-65535/],
      ['http://h\r\nX-Injected: 1', /control characters/],
      ['http://h/\n', /control characters/],
      ['http://h/a\tb', /control characters/],
      ['http://h/\0', /control characters/],
      ['http://h/a b', /control characters/],
      ['h\x7f', /control characters/],
      ['http://evil\\@good/', /backslashes/],
      ['::1', /bare host/],
      ['-h', /bare host/],
      ['h..:1', /bare host/],
      ['http://h:abc', /needs a host/],
      ['javascript:alert(1)', /bare host/],
      ['//h/x', /path or query needs a scheme/],
      ['1http://h', /must start with http or https/],
    ];
    for (const [input, message] of table) {
      assert.throws(
        () => normaliseAddress(input),
        (err: unknown) => err instanceof AddressError && message.test(err.message) && !err.message.includes('PASS'),
        JSON.stringify(input),
      );
    }
  });

  it('takes the scheme list as a parameter (WS_SCHEMES for ws_address; no bare form there)', () => {
    assert.equal(normaliseAddress('WS://h:8546/x', WS_SCHEMES), 'ws://h:8546/x');
    assert.equal(normaliseAddress('wss://H:443', WS_SCHEMES), 'wss://h');
    assert.throws(() => normaliseAddress('http://h', WS_SCHEMES), /scheme must be ws or wss/);
    // A bare host[:port] means http://, which a ws_address cannot be.
    assert.throws(() => normaliseAddress('h:8546', WS_SCHEMES), /^AddressError: must start with ws or wss:\/\/$/);
    assert.equal(originTarget('wss://h/ws').destination, 'wss://h:443');
  });
});

describe('originTarget', () => {
  it('is where the gateway and every probe send: path and query as stored, nothing appended', () => {
    const table: Array<[string, Partial<ReturnType<typeof originTarget>>]> = [
      [
        '127.0.0.1:8545',
        { host: '127.0.0.1:8545', path: '/', port: 8545, tls: false, destination: 'http://127.0.0.1:8545' },
      ],
      ['node-a', { host: 'node-a', path: '/', port: 80, destination: 'http://node-a:80' }],
      ['http://h?x=1', { path: '/?x=1' }],
      ['https://h/v3/K?apikey=K', { path: '/v3/K?apikey=K', port: 443, tls: true, destination: 'https://h:443' }],
      ['http://[::1]:9/', { hostname: '::1', host: '[::1]:9', destination: 'http://[::1]:9' }],
      ['http://h/rpc', { path: '/rpc', authorization: undefined }],
    ];
    for (const [address, expected] of table) {
      const target = originTarget(address);
      for (const [key, value] of Object.entries(expected)) {
        assert.equal(target[key as keyof typeof target], value, `${address} ${key}`);
      }
    }
  });

  it('sends user:password as Basic auth (percent-decoded, UTF-8)', () => {
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
    assert.equal(originTarget('http://apiuser:PASS@h/').authorization, basic('apiuser:PASS'));
    assert.equal(originTarget('http://us%20er:p%40ss@h').authorization, basic('us er:p@ss'));
    assert.equal(originTarget('http://user@h').authorization, basic('user:'));
    assert.equal(originTarget('http://:pw@h').authorization, basic(':pw'));
  });
});

describe('maskAddress', () => {
  it('shows addresses without secrets exactly as stored', () => {
    for (const address of ['127.0.0.1:8545', 'node-a', 'http://10.0.0.5:8545', 'https://rpc.example/v1/mainnet']) {
      assert.equal(maskAddress(address), address);
    }
  });

  it('masks credentials, every query value and key-like path segments', () => {
    const table: Array<[string, string]> = [
      ['https://user:pw@rpc.example/', 'https://***:***@rpc.example/'],
      ['https://user@rpc.example', 'https://***@rpc.example'],
      ['https://:pw@rpc.example', 'https://:***@rpc.example'],
      ['https://rpc.example/rpc?apikey=s3cret&x=1', 'https://rpc.example/rpc?apikey=***&x=***'],
      ['https://rpc.example/rpc?s3cretvalue', 'https://rpc.example/rpc?***'],
      [`https://rpc.example/rpc?${KEY}=&x=1&empty=`, 'https://rpc.example/rpc?***&x=***&***'],
      [`https://mainnet.infura.io/v3/${KEY}`, 'https://mainnet.infura.io/v3/***'],
      ['https://x.example/AbCdEfGhIjKlMnOpQrStUvWxYz012345_-', 'https://x.example/***'],
      [`http://apiuser:PASS@127.0.0.1:9/v3/${KEY}?apikey=K`, 'http://***:***@127.0.0.1:9/v3/***?apikey=***'],
      // Rows written by older versions: a bare address with secrets, read as http://… the way the gateway did.
      [`apiuser:PASS@127.0.0.1:9/v3/${KEY}?apikey=K`, 'http://***:***@127.0.0.1:9/v3/***?apikey=***'],
      ['http://h/x#frag', 'http://h/x#***'],
      ['smtp://mailer:pw@mail.example:587', 'smtp://***:***@mail.example:587'],
      ['http://h/\r\n', '***'],
    ];
    for (const [address, masked] of table) {
      assert.equal(maskAddress(address), masked, address);
      assert.equal(maskAddress(masked), masked, `idempotent: ${masked}`);
    }
    assert.ok(isMasked(maskAddress('https://user@rpc.example/')));
  });
});

describe('unmaskAddress (secrets bound to their destination)', () => {
  const stored = `https://apiuser:PASS@rpc.example/v3/${KEY}?apikey=K&chain=1`;

  it('gives back the stored secrets while scheme, host and port are unchanged', () => {
    assert.deepEqual(unmaskAddress(maskAddress(stored), stored), { address: stored });
    assert.deepEqual(unmaskAddress('https://***:***@RPC.example:443/v3/***?apikey=***&chain=2', stored), {
      address: `https://apiuser:PASS@RPC.example:443/v3/${KEY}?apikey=K&chain=2`,
    });
    assert.deepEqual(unmaskAddress('https://rpc.example/v4/***', stored), {
      address: `https://rpc.example/v4/${KEY}`,
    });
    const keyed = `https://rpc.example/?${KEY}=&a=1&plain`;
    assert.equal(maskAddress(keyed), 'https://rpc.example/?***&a=***&***');
    assert.deepEqual(unmaskAddress(maskAddress(keyed), keyed), { address: keyed });
  });

  it('refuses a *** for another destination', () => {
    for (const sent of [
      'https://***:***@evil.example/v3/***?apikey=***',
      'http://***:***@rpc.example/v3/***',
      'https://***:***@rpc.example:8443/v3/***',
      'https://rpc.example.evil.example/?apikey=***',
    ]) {
      assert.deepEqual(unmaskAddress(sent, stored), { refused: 'destination' }, sent);
    }
  });

  it('refuses a *** with no stored secret at that place', () => {
    for (const sent of [
      'https://rpc.example/***/x',
      'https://rpc.example/v3/***?other=***',
      'https://rpc.example/v3/***?apikey=***&apikey=***',
      'https://x***@rpc.example/',
      'https://rpc.example/v3/a***',
    ]) {
      assert.deepEqual(unmaskAddress(sent, stored), { refused: 'missing' }, sent);
    }
    assert.deepEqual(unmaskAddress('https://***@rpc.example/', 'https://rpc.example/'), { refused: 'missing' });
    assert.deepEqual(unmaskAddress('https://***@rpc.example/', undefined), { refused: 'missing' });
  });

  it('compares destinations with the default port written out', () => {
    assert.equal(destinationOf('https://rpc.example'), destinationOf('https://rpc.example:443/x'));
    assert.equal(destinationOf('127.0.0.1'), 'http://127.0.0.1:80');
    assert.notEqual(destinationOf('http://rpc.example'), destinationOf('https://rpc.example'));
  });
});
