/**
 * A client that aborts an API request half-way through its body is logged at debug, not error (SPEC §8
 * "Input hygiene"): a raw socket sends the headers and part of a JSON body, then closes. Nothing is
 * created, no error or warning is logged, and the server keeps answering.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/log.js';
import { type ApiFixture, startApiFixture } from './setup.js';

/** Waits (bounded) until `check` holds, re-checking every few milliseconds. */
async function waitFor(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('aborted API requests', () => {
  let f: ApiFixture;
  const lines: string[] = [];
  const logged = () => lines.map((line) => JSON.parse(line) as { level: string; msg: string; route?: string });

  before(async () => {
    f = await startApiFixture({}, { logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }) });
  });
  after(() => f.close());

  test('half a body, then the socket closes: a debug line, no error, nothing created', async () => {
    const url = new URL(f.app.apiUrl);
    const path = `${url.pathname}/accounts/${f.accountId}/load_balancers/pools`;
    const part = '{"name":"half","origins":[{"name":"a","addr';
    const head =
      `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${f.token}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 500\r\n';
    const open = async () => {
      const socket = connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      return socket;
    };
    const abortsLogged = () => logged().filter((l) => l.msg === 'api request aborted by the client').length;

    // 1. Headers and part of the body in one write, closed at once.
    const first = await open();
    first.write(`${head}\r\n${part}`);
    first.destroy();
    await waitFor(() => abortsLogged() === 1, 'the first abort logged');

    // 2. `Expect: 100-continue`: the server has dispatched the request when it answers 100; part of the
    //    body follows, then the socket closes while the body is being read.
    const second = await open();
    const continued = new Promise<void>((resolve) =>
      second.on('data', (chunk: Buffer) => {
        if (chunk.toString('latin1').startsWith('HTTP/1.1 100')) resolve();
      }),
    );
    second.write(`${head}Expect: 100-continue\r\n\r\n`);
    await continued;
    second.write(part);
    second.destroy();
    await waitFor(() => abortsLogged() === 2, 'the second abort logged');

    const aborts = logged().filter((l) => l.msg === 'api request aborted by the client');
    assert.ok(aborts.every((l) => l.level === 'debug' && l.route === '/accounts/:account_id/load_balancers/pools'));
    const loud = logged().filter((l) => l.level === 'error' || l.level === 'warn');
    assert.deepEqual(loud, [], 'nothing at warn or error');
    const pools = await f.call('GET', `/accounts/${f.accountId}/load_balancers/pools`);
    assert.equal(pools.status, 200, 'the server keeps answering');
    assert.ok(!(pools.body.result as { name: string }[]).some((pool) => pool.name === 'half'), 'nothing created');
  });
});
