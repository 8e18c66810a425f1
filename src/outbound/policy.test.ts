import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { OutboundPolicy, type Resolver, TargetRefusedError } from './policy.js';

/**
 * The target matrix: every refused spelling and the allowed ones, for a trusted account, an untrusted
 * one, and a trusted account under webhooks.deny_private. `expect` per column: 'ok' or the words the
 * refusal must contain.
 */
const TRUSTED = 'a'.repeat(32);
const TENANT = 'b'.repeat(32);

type Verdict = 'ok' | RegExp;
interface Row {
  url: string;
  trusted: Verdict;
  tenant: Verdict;
  denyPrivate?: Verdict;
}

const ALWAYS = (what: RegExp): Row['trusted'] => what;
const LOCAL = /allowed only for accounts in outbound\.trusted_accounts/;
const DENIED = /webhooks\.deny_private/;

const local = (url: string, kind: RegExp): Row => ({
  url,
  trusted: 'ok',
  tenant: new RegExp(`${kind.source}.*${LOCAL.source}`),
  denyPrivate: DENIED,
});
const always = (url: string, kind: RegExp): Row => ({
  url,
  trusted: ALWAYS(kind),
  tenant: ALWAYS(kind),
  denyPrivate: ALWAYS(kind),
});

const LINK = /link-local address \(always refused\)/;
const META = /cloud metadata (address|service) \(always refused\)/;
const MULTI = /multicast address \(always refused\)/;
const BCAST = /broadcast or reserved .* \(always refused\)/;
const UNSPEC = /unspecified address \(always refused\)/;
const LOOP = /loopback address/;
const PRIV = /private address/;
const CGNAT = /carrier-grade NAT/;

const MATRIX: Row[] = [
  // link-local and metadata, IPv4 and every IPv6 spelling
  always('http://169.254.169.254/latest/meta-data/', LINK),
  always('http://169.254.0.1/', LINK),
  always('http://2852039166/', LINK), // 169.254.169.254 as one decimal number
  always('http://0xa9.0xfe.0xa9.0xfe/', LINK),
  always('http://0251.0376.0251.0376/', LINK), // octal
  always('http://[fe80::1]/', LINK),
  always('http://[febf::1]/', LINK),
  always('http://[::ffff:169.254.169.254]/', LINK), // IPv4-mapped
  always('http://[::ffff:a9fe:a9fe]/', LINK), // IPv4-mapped, hex
  always('http://[::169.254.169.254]/', LINK), // IPv4-compatible
  always('http://[::ffff:0:169.254.169.254]/', LINK), // SIIT
  always('http://[64:ff9b::a9fe:a9fe]/', LINK), // NAT64
  always('http://[64:ff9b:1::a9fe:a9fe]/', LINK), // local-use NAT64
  always('http://[2002:a9fe:a9fe::1]/', LINK), // 6to4
  always('http://100.100.100.200/', META),
  always('http://192.0.0.192/', META),
  always('http://168.63.129.16/', META),
  always('http://[fd00:ec2::254]/', META),
  always('http://[::ffff:100.100.100.200]/', META),
  always('http://metadata.google.internal/computeMetadata/v1/', META),
  always('http://METADATA.GOOGLE.INTERNAL./', META),
  always('http://metadata.goog/', META),
  always('http://metadata/', META),
  always('http://instance-data/', META),
  always('http://instance-data.ec2.internal/', META),
  // multicast, broadcast, unspecified
  always('http://224.0.0.1/', MULTI),
  always('http://239.255.255.250/', MULTI),
  always('http://[ff02::1]/', MULTI),
  always('http://[::ffff:224.0.0.1]/', MULTI),
  always('http://255.255.255.255/', BCAST),
  always('http://240.0.0.1/', BCAST),
  always('http://[2002:ffff:ffff::]/', BCAST),
  always('http://0.0.0.0/', UNSPEC),
  always('http://0/', UNSPEC),
  always('http://0.1.2.3/', UNSPEC),
  always('http://[::]/', UNSPEC),
  always('http://[::ffff:0.0.0.0]/', UNSPEC),
  always('http://[64:ff9b::]/', UNSPEC),
  // loopback, private, CGNAT: trusted accounts only
  local('http://127.0.0.1:8545/', LOOP),
  local('http://127.8.9.10/', LOOP),
  local('http://2130706433/', LOOP),
  local('http://0x7f.1/', LOOP),
  local('http://017700000001/', LOOP),
  local('http://127.1/', LOOP),
  local('http://127.0.0.1./', LOOP),
  local('http://[::1]/', LOOP),
  local('http://[::ffff:127.0.0.1]/', LOOP),
  local('http://[::ffff:7f00:1]/', LOOP),
  local('http://[0:0:0:0:0:ffff:7f00:1]/', LOOP),
  local('http://[::127.0.0.1]/', LOOP),
  local('http://[::ffff:0:127.0.0.1]/', LOOP),
  local('http://[64:ff9b::127.0.0.1]/', LOOP),
  local('http://[2002:7f00:1::]/', LOOP),
  local('http://localhost:8545/', LOOP),
  local('http://LocalHost./', LOOP),
  local('http://rpc.localhost/', LOOP),
  local('http://ip6-localhost/', LOOP),
  local('http://10.0.0.1/', PRIV),
  local('http://172.16.5.4/', PRIV),
  local('http://172.31.255.255/', PRIV),
  local('http://192.168.1.1/', PRIV),
  local('http://198.18.0.1/', PRIV),
  local('http://[fd12::1]/', PRIV),
  local('http://[fc00::1]/', PRIV),
  local('http://[::ffff:10.0.0.1]/', PRIV),
  local('http://[64:ff9b::192.168.0.1]/', PRIV),
  local('http://[2002:c0a8:101::1]/', PRIV),
  local('http://100.64.0.1/', CGNAT),
  local('http://100.127.255.254/', CGNAT),
  local('http://[::ffff:100.64.0.1]/', CGNAT),
  // public: allowed for everyone
  { url: 'https://rpc.example.com/v3/key?x=1', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://8.8.8.8/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://172.32.0.1/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://100.128.0.1/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://[2606:4700::1111]/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://[::ffff:8.8.8.8]/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://[2002:808:808::1]/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  { url: 'http://notlocalhost.example/', trusted: 'ok', tenant: 'ok', denyPrivate: 'ok' },
  // schemes
  always('ftp://example.com/', /scheme ftp \(only http, https\)/),
  always('file:///etc/passwd', /scheme file/),
  always('ws://example.com/', /scheme ws/),
  always('not a url', /not an absolute http, https URL/),
];

const policy = new OutboundPolicy({ trustedAccounts: [TRUSTED] });
const columns = [
  ['trusted', policy.rulesFor(TRUSTED)],
  ['tenant', policy.rulesFor(TENANT)],
  ['denyPrivate', policy.rulesFor(TRUSTED, { denyPrivate: true })],
] as const;

describe('the outbound target matrix', () => {
  for (const row of MATRIX) {
    it(row.url, () => {
      for (const [column, rules] of columns) {
        const expected = row[column] ?? row.trusted;
        if (expected === 'ok') {
          assert.doesNotThrow(() => policy.checkUrl(row.url, rules), `${column}: ${row.url} allowed`);
        } else {
          assert.throws(
            () => policy.checkUrl(row.url, rules),
            (err: Error) =>
              err instanceof TargetRefusedError &&
              /^target not allowed: /.test(err.message) &&
              expected.test(err.message),
            `${column}: ${row.url} refused with ${expected}`,
          );
        }
      }
    });
  }
});

describe('refusal texts', () => {
  it('never contain the credentials, path or query of the URL', () => {
    const rules = policy.rulesFor(TENANT);
    for (const url of [
      'http://user:hunter2@127.0.0.1:8545/v3/SECRETKEY?apikey=SECRET2',
      'http://user:hunter2@169.254.169.254/v3/SECRETKEY?apikey=SECRET2',
      'ftp://user:hunter2@example.com/SECRETKEY?apikey=SECRET2',
    ]) {
      assert.throws(
        () => policy.checkUrl(url, rules),
        (err: Error) => !/hunter2|SECRET/.test(err.message),
      );
    }
  });

  it('name the embedded IPv4 address of an IPv6 spelling', () => {
    assert.throws(
      () => policy.checkUrl('http://[::ffff:a9fe:a9fe]/', policy.rulesFor(TRUSTED)),
      /host ::ffff:a9fe:a9fe is an IPv6 form of 169\.254\.169\.254, a link-local address \(always refused\)/,
    );
  });

  it('ws/wss only when the rules allow them', () => {
    const rules = policy.rulesFor(TENANT, { schemes: ['ws:', 'wss:'] });
    assert.equal(policy.checkUrl('wss://rpc.example.com/ws', rules).protocol, 'wss:');
    assert.throws(() => policy.checkUrl('ws://0x7f.1/', rules), LOOP);
    assert.throws(() => policy.checkUrl('http://rpc.example.com/', rules), /scheme http \(only ws, wss\)/);
  });
});

describe('trusted_accounts', () => {
  it('an empty list trusts nobody; the list is exact', () => {
    const nobody = new OutboundPolicy({ trustedAccounts: [] });
    assert.throws(() => nobody.checkUrl('http://127.0.0.1/', nobody.rulesFor(TRUSTED)), LOCAL);
    const two = new OutboundPolicy({ trustedAccounts: [TRUSTED, TENANT] });
    assert.doesNotThrow(() => two.checkUrl('http://10.0.0.1/', two.rulesFor(TENANT)));
    assert.equal(two.isTrusted('c'.repeat(32)), false);
  });

  it('a reload retrusts: rules handed out before follow from their next check on', () => {
    const p = new OutboundPolicy({ trustedAccounts: [TRUSTED] });
    const rules = p.rulesFor(TRUSTED);
    const guard = p.connectGuard(rules);
    assert.doesNotThrow(() => p.checkUrl('http://127.0.0.1/', rules));
    assert.equal(guard.refusal('127.0.0.1'), undefined);
    p.retrust([TENANT]);
    assert.throws(() => p.checkUrl('http://127.0.0.1/', rules), LOCAL);
    assert.match(guard.refusal('127.0.0.1')?.message ?? '', /outbound\.trusted_accounts/);
    assert.doesNotThrow(() => p.checkUrl('http://10.0.0.1/', p.rulesFor(TENANT)));
  });
});

/** A resolver whose answers a test sets per name, counting the lookups. */
function fakeDns(answers: Record<string, string[]>): Resolver & { lookups: number } {
  const resolve = async (hostname: string) => {
    resolve.lookups += 1;
    const found = answers[hostname];
    if (found === undefined) throw Object.assign(new Error(`queryA ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  resolve.lookups = 0;
  return resolve;
}

describe('resolved addresses', () => {
  it('a name is refused when ANY address it resolves to is refused', async () => {
    const dns = fakeDns({
      'mixed.example': ['93.184.216.34', '169.254.169.254'],
      'local.example': ['10.1.2.3'],
      'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
      'mapped.example': ['::ffff:127.0.0.1'],
    });
    const p = new OutboundPolicy({ trustedAccounts: [TRUSTED], resolve: dns });
    await assert.rejects(p.checkResolved('mixed.example', p.rulesFor(TRUSTED)), LINK);
    await assert.rejects(
      p.checkResolved('local.example', p.rulesFor(TENANT)),
      /local\.example resolves to 10\.1\.2\.3/,
    );
    await p.checkResolved('local.example', p.rulesFor(TRUSTED));
    await assert.rejects(p.checkResolved('mapped.example', p.rulesFor(TENANT)), LOOP);
    assert.equal((await p.checkResolved('public.example', p.rulesFor(TENANT))).length, 2);
    await assert.rejects(p.checkResolved('missing.example', p.rulesFor(TENANT)), { code: 'ENOTFOUND' });
    // names refused by themselves never reach DNS
    const before = dns.lookups;
    await assert.rejects(p.checkResolved('metadata.google.internal', p.rulesFor(TRUSTED)), META);
    await assert.rejects(p.checkResolved('[::1]', p.rulesFor(TENANT)), LOOP);
    assert.equal(dns.lookups, before);
  });

  it('the connect-time lookup re-checks every answer: a name rebound after the URL check is refused', async () => {
    const server = createServer((socket) => socket.on('error', () => {}).end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const answers: Record<string, string[]> = { 'rebind.example': ['93.184.216.34'] };
    const p = new OutboundPolicy({ trustedAccounts: [TRUSTED], resolve: fakeDns(answers) });
    const { connect } = await import('node:net');
    const dial = (account: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host: 'rebind.example', port, lookup: p.lookup(p.rulesFor(account)) });
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(`${err.code}: ${err.message}`));
      });
    try {
      await p.checkResolved('rebind.example', p.rulesFor(TENANT)); // the URL check: a public answer
      answers['rebind.example'] = ['127.0.0.1']; // …then DNS answers loopback
      assert.match(await dial(TENANT), /^ETARGETREFUSED: target not allowed: rebind\.example resolves to 127\.0\.0\.1/);
      assert.equal(await dial(TRUSTED), 'connected', 'a trusted account reaches the rebound loopback address');
    } finally {
      server.close();
    }
  });

  it('connectGuard refuses literal IPs (sockets skip lookup for them) and leaves names to lookup', () => {
    const guard = policy.connectGuard(policy.rulesFor(TENANT));
    assert.match(guard.refusal('127.0.0.1')?.message ?? '', LOOP);
    assert.match(guard.refusal('::ffff:169.254.169.254')?.message ?? '', LINK);
    assert.equal(guard.refusal('8.8.8.8'), undefined);
    assert.equal(guard.refusal('rpc.example.com'), undefined);
    assert.equal(policy.connectGuard(policy.rulesFor(TRUSTED)).refusal('127.0.0.1'), undefined);
  });
});
