import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServerExchange } from '../../http1/index.js';
import { AddressRanges } from '../../model/ip-address.js';
import { clientAddress, exchangeClient, type ForwardingHeaders, MAX_HOPS } from './client-address.js';

const TRUSTED = new AddressRanges(['10.0.0.0/8', 'fd00::/8']);
const PROXY = '10.0.0.2';

function headers(forwarded: string[] = [], xForwardedFor: string[] = []): ForwardingHeaders {
  return { forwarded, xForwardedFor };
}
const xff = (...lines: string[]) => clientAddress(PROXY, headers([], lines), TRUSTED);
const fwd = (...lines: string[]) => clientAddress(PROXY, headers(lines), TRUSTED);

describe('clientAddress: who counts', () => {
  it('is the peer when no range is trusted, or the peer is not inside one', () => {
    const spoofed = headers(['for=198.51.100.1'], ['198.51.100.1']);
    assert.equal(clientAddress('203.0.113.9', spoofed, undefined), '203.0.113.9');
    assert.equal(clientAddress('203.0.113.9', spoofed, new AddressRanges([])), '203.0.113.9');
    assert.equal(clientAddress('203.0.113.9', spoofed, TRUSTED), '203.0.113.9');
    assert.equal(clientAddress(undefined, spoofed, TRUSTED), 'unknown');
  });

  it('reads the headers from a trusted peer in either spelling (IPv4-mapped, IPv6)', () => {
    assert.equal(clientAddress('::ffff:10.0.0.2', headers([], ['203.0.113.5']), TRUSTED), '203.0.113.5');
    assert.equal(clientAddress('fd00::2', headers([], ['203.0.113.5']), TRUSTED), '203.0.113.5');
  });

  it('is the peer when a trusted peer sends neither header', () => {
    assert.equal(clientAddress(PROXY, headers(), TRUSTED), PROXY);
  });
});

describe('clientAddress: X-Forwarded-For', () => {
  it('takes the last untrusted hop, walking from the right past trusted proxies', () => {
    assert.equal(xff('203.0.113.5'), '203.0.113.5');
    assert.equal(xff('198.51.100.1, 203.0.113.5, 10.1.1.1'), '203.0.113.5');
    assert.equal(xff('evil, also-evil, 203.0.113.5'), '203.0.113.5');
  });

  it('tolerates spaces, tabs and empty list elements', () => {
    assert.equal(xff('  203.0.113.5 ,\t10.1.1.1\t'), '203.0.113.5');
    assert.equal(xff('203.0.113.5,,, ,10.1.1.1,'), '203.0.113.5');
  });

  it('reads ports and IPv6 spellings, and answers in canonical form', () => {
    assert.equal(xff('203.0.113.5:4711'), '203.0.113.5');
    assert.equal(xff('[2001:DB8::5]:4711'), '2001:db8::5');
    assert.equal(xff('[2001:db8::5]'), '2001:db8::5');
    assert.equal(xff('2001:0db8:0:0::5'), '2001:db8::5');
    assert.equal(xff('::ffff:203.0.113.5'), '203.0.113.5');
  });

  it("walks every field line: a proxy that adds its own line is not fooled by the client's", () => {
    assert.equal(xff('198.51.100.1', '203.0.113.5'), '203.0.113.5');
    assert.equal(xff('198.51.100.1', '203.0.113.5, 10.9.9.9'), '203.0.113.5');
    assert.equal(xff('203.0.113.5', '10.9.9.9'), '203.0.113.5');
  });

  it('takes the leftmost hop when every hop is trusted', () => {
    assert.equal(xff('10.3.3.3, 10.1.1.1'), '10.3.3.3');
  });

  it('falls back to the peer on unknown or malformed hops reached before an untrusted one', () => {
    assert.equal(xff('unknown'), PROXY);
    assert.equal(xff('203.0.113.5, unknown, 10.1.1.1'), PROXY);
    assert.equal(xff('not-an-address'), PROXY);
    assert.equal(xff('203.0.113.256'), PROXY);
    assert.equal(xff('"203.0.113.5"'), PROXY);
    assert.equal(xff('203.0.113.5:99999x'), PROXY);
    assert.equal(xff('[203.0.113.5]'), PROXY);
    assert.equal(xff('[2001:db8::5'), PROXY);
    assert.equal(xff('fe80::1%eth0'), PROXY);
    assert.equal(xff(''), PROXY);
    assert.equal(xff(' , ,'), PROXY);
  });
});

describe('clientAddress: Forwarded (RFC 7239)', () => {
  it('takes for= of the last untrusted element', () => {
    assert.equal(fwd('for=192.0.2.60;proto=http;by=203.0.113.43'), '192.0.2.60');
    assert.equal(fwd('for=198.51.100.1, for=192.0.2.60, for=10.1.1.1'), '192.0.2.60');
    assert.equal(fwd('For="192.0.2.60" ; Proto=https'), '192.0.2.60');
  });

  it('reads quoted IPv6 with a port, and quoted-pair escapes', () => {
    assert.equal(fwd('for="[2001:db8:cafe::17]:4711"'), '2001:db8:cafe::17');
    assert.equal(fwd('for="[2001:db8:cafe::17]"'), '2001:db8:cafe::17');
    assert.equal(fwd('for="\\[2001:db8:cafe::17\\]"'), '2001:db8:cafe::17');
    assert.equal(fwd('for=[2001:db8:cafe::17]'), '2001:db8:cafe::17');
  });

  it('uses an obfuscated identifier as the client (with or without an obfuscated port)', () => {
    assert.equal(fwd('for=_hidden, for=10.1.1.1'), '_hidden');
    assert.equal(fwd('for="_SEVKISEK:_4711"'), '_SEVKISEK');
  });

  it('wins over X-Forwarded-For when both are present (a blank Forwarded does not count)', () => {
    assert.equal(clientAddress(PROXY, headers(['for=192.0.2.60'], ['203.0.113.5']), TRUSTED), '192.0.2.60');
    assert.equal(clientAddress(PROXY, headers(['for=unknown'], ['203.0.113.5']), TRUSTED), PROXY);
    assert.equal(clientAddress(PROXY, headers(['  '], ['203.0.113.5']), TRUSTED), '203.0.113.5');
  });

  it("is not fooled by a malformed element the client put before the proxy's", () => {
    assert.equal(fwd('for="unterminated, for=192.0.2.60'), '192.0.2.60');
    assert.equal(fwd('for=1.1.1.1;for=2.2.2.2', 'for=192.0.2.60'), '192.0.2.60');
    assert.equal(fwd('garbage;;;===', 'for=192.0.2.60;by=10.0.0.2'), '192.0.2.60');
  });

  it('falls back to the peer on unknown, a missing for=, or a malformed element', () => {
    assert.equal(fwd('for=unknown'), PROXY);
    assert.equal(fwd('for="unknown:4711"'), PROXY);
    assert.equal(fwd('proto=https;host=example.com'), PROXY);
    assert.equal(fwd('for=192.0.2.60;for=192.0.2.61'), PROXY);
    assert.equal(fwd('for'), PROXY);
    assert.equal(fwd('=192.0.2.60'), PROXY);
    assert.equal(fwd('for="192.0.2.60'), PROXY);
    assert.equal(fwd('for="19"2.0.2.60"'), PROXY);
    assert.equal(fwd('for="192.0.2.60\\"'), PROXY);
    assert.equal(fwd('for=2001:db8::1:4711'), '2001:db8::1:4711'); // bare IPv6 (lenient): no port to strip
    assert.equal(fwd('for=192.0.2.60:80:81'), PROXY);
    assert.equal(fwd('for=[192.0.2.60]'), PROXY);
    assert.equal(fwd('for=_'), PROXY);
    assert.equal(fwd('for=_a b'), PROXY);
  });
});

describe('clientAddress: bounded work on adversarial input', () => {
  it('finds the client among many hops the client added on the left', () => {
    const junk = Array.from({ length: 5000 }, (_, i) => `198.51.${i % 256}.1`).join(', ');
    assert.equal(xff(`${junk}, 203.0.113.5, 10.1.1.1`), '203.0.113.5');
    assert.equal(fwd(`${junk.replaceAll('198', 'for=198')}, for=192.0.2.60`), '192.0.2.60');
  });

  it(`gives up (the peer) after ${MAX_HOPS} trusted hops`, () => {
    const trustedHops = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i}.1`).join(',');
    assert.equal(xff(`203.0.113.5,${trustedHops(MAX_HOPS - 1)}`), '203.0.113.5');
    assert.equal(xff(`203.0.113.5,${trustedHops(MAX_HOPS)}`), PROXY);
    assert.equal(xff(...Array.from({ length: MAX_HOPS + 1 }, () => '10.1.1.1')), PROXY);
    assert.equal(xff(','.repeat(100_000)), PROXY);
  });

  it('refuses an element over 256 characters without reading the whole header', () => {
    const huge = 'a'.repeat(1_000_000);
    assert.equal(xff(huge), PROXY);
    assert.equal(fwd(`for=${huge}`), PROXY);
    assert.equal(xff(`${huge}, 203.0.113.5`), '203.0.113.5');
    assert.equal(fwd(`for="[2001:db8::1]:4711";proto=https;host="${'h'.repeat(300)}"`), PROXY);
  });

  it('never throws, whatever the lines hold', () => {
    const alphabet = 'for=_"\\[]:;,. \t0123456789abcdefABCDEF%unknown';
    let seed = 17;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let n = 0; n < 5000; n += 1) {
      const length = Math.floor(random() * 80);
      let line = '';
      for (let i = 0; i < length; i += 1) line += alphabet[Math.floor(random() * alphabet.length)];
      const both = clientAddress(PROXY, headers([line], [line]), TRUSTED);
      const onlyXff = clientAddress(PROXY, headers([], [line]), TRUSTED);
      assert.equal(typeof both, 'string');
      assert.equal(typeof onlyXff, 'string');
    }
  });
});

describe('exchangeClient', () => {
  /** An exchange whose request carried these field lines (name, value, …). */
  function exchange(remoteAddress: string, lines: string[]): ServerExchange {
    const all = (name: string) => lines.filter((_, i) => i % 2 === 1 && lines[i - 1] === name);
    return { remoteAddress, headerLines: all } as unknown as ServerExchange;
  }

  it('reads every field line of the exchange from a trusted peer', () => {
    const ex = exchange(PROXY, ['host', 'x', 'x-forwarded-for', '198.51.100.1', 'x-forwarded-for', '203.0.113.5']);
    assert.equal(exchangeClient(ex, TRUSTED), '203.0.113.5');
    assert.equal(exchangeClient(ex, undefined), PROXY);
  });
});
