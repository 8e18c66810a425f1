import assert from 'node:assert/strict';
import { isIPv4, isIPv6 } from 'node:net';
import { describe, it } from 'node:test';
import { AddressRanges, formatIp, parseCidr, parseIp } from './ip-address.js';

const canonical = (text: string): string | undefined => {
  const address = parseIp(text);
  return address === undefined ? undefined : formatIp(address);
};

describe('parseIp / formatIp', () => {
  it('reads dotted quads strictly', () => {
    assert.equal(canonical('192.0.2.1'), '192.0.2.1');
    assert.equal(canonical('0.0.0.0'), '0.0.0.0');
    assert.equal(canonical('255.255.255.255'), '255.255.255.255');
    for (const bad of [
      '256.1.1.1',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '1..2.3',
      '1.2.3.4 ',
      '127.1',
      '0x7f.0.0.1',
      '',
      '.',
    ]) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('writes IPv6 in RFC 5952 form and IPv4-mapped addresses as IPv4', () => {
    assert.equal(canonical('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
    assert.equal(canonical('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
    assert.equal(canonical('2001:0db8:0000:0001:0001:0001:0001:0001'), '2001:db8:0:1:1:1:1:1');
    assert.equal(canonical('::'), '::');
    assert.equal(canonical('::1'), '::1');
    assert.equal(canonical('1::'), '1::');
    assert.equal(canonical('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(canonical('::FFFF:c000:0201'), '192.0.2.1');
    assert.equal(canonical('64:ff9b::192.0.2.1'), '64:ff9b::c000:201');
    for (const bad of [
      'fe80::1%eth0',
      '1:::2',
      '1::2::3',
      ':1::',
      '1:2:3:4:5:6:7:8:9',
      '12345::',
      'g::1',
      '1.2.3.4::',
    ]) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('agrees with node:net on what is an address (table and generated spellings)', () => {
    const pieces = ['', ':', '::', '0', '1', 'ffff', 'FFFF', '12345', '1.2.3.4', '256.0.0.1', '.', 'g', '%1'];
    let checked = 0;
    for (const a of pieces) {
      for (const b of pieces) {
        for (const c of pieces) {
          const text = `${a}:${b}${c}`;
          const ours = parseIp(text) !== undefined;
          const theirs = (isIPv6(text) && !text.includes('%')) || isIPv4(text);
          assert.equal(ours, theirs, text);
          checked += 1;
        }
      }
    }
    assert.ok(checked > 1000);
  });
});

describe('parseCidr', () => {
  it('takes ranges and single addresses', () => {
    assert.deepEqual(parseCidr('10.0.0.0/8'), { ok: true, address: { v4: 0x0a000000 }, prefix: 104 });
    assert.equal(parseCidr('10.1.2.3').ok, true);
    assert.equal(parseCidr('fd00::/8').ok, true);
    assert.equal(parseCidr('::/0').ok, true);
    assert.equal(parseCidr('0.0.0.0/0').ok, true);
  });

  it('refuses malformed ranges with a reason', () => {
    const message = (text: string) => {
      const parsed = parseCidr(text);
      assert.equal(parsed.ok, false, text);
      return parsed.ok ? '' : parsed.message;
    };
    assert.match(message('10.0.0.1/8'), /bits set past the \/8 prefix/);
    assert.match(message('10.0.0.0/33'), /0 to 32/);
    assert.match(message('fd00::/129'), /0 to 128/);
    assert.match(message('10.0.0.0/'), /0 to 32/);
    assert.match(message('10.0.0.0/-1'), /0 to 32/);
    assert.match(message('example.com/24'), /IPv4 or IPv6/);
  });
});

describe('AddressRanges', () => {
  const ranges = new AddressRanges(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '2001:db8:1::/48']);

  it('matches IPv4 ranges, in both spellings', () => {
    assert.equal(ranges.contains('10.255.0.1'), true);
    assert.equal(ranges.contains('::ffff:10.1.2.3'), true);
    assert.equal(ranges.contains('11.0.0.1'), false);
    assert.equal(ranges.contains('192.0.2.7'), true);
    assert.equal(ranges.contains('192.0.2.8'), false);
  });

  it('matches IPv6 ranges at any prefix length', () => {
    assert.equal(ranges.contains('fd12:3456::1'), true);
    assert.equal(ranges.contains('fe00::1'), false);
    assert.equal(ranges.contains('2001:db8:1:ffff::1'), true);
    assert.equal(ranges.contains('2001:db8:2::1'), false);
  });

  it('matches IPv4 addresses against IPv6 ranges through the mapped form', () => {
    assert.equal(new AddressRanges(['::/0']).contains('203.0.113.9'), true);
    assert.equal(new AddressRanges(['::ffff:203.0.113.0/120']).contains('203.0.113.9'), true);
    assert.equal(new AddressRanges(['0.0.0.0/0']).contains('203.0.113.9'), true);
    assert.equal(new AddressRanges(['0.0.0.0/0']).contains('2001:db8::1'), false);
  });

  it('is false for text that is not an address, and empty without ranges', () => {
    assert.equal(ranges.contains('unknown'), false);
    assert.equal(ranges.contains(''), false);
    assert.equal(new AddressRanges([]).empty, true);
    assert.equal(ranges.empty, false);
  });

  it('throws on an entry that is not a range', () => {
    assert.throws(() => new AddressRanges(['10.0.0.0/40']), /"10.0.0.0\/40" the prefix length/);
  });
});
