/**
 * The HTTP/1.1 client (src/http1/index.ts) driven directly: its streaming mode (a large 2xx body
 * resolves early with `rest`: byte-exact, with backpressure that stops the origin while nobody reads,
 * and destroying `rest` drops the origin's connection) and https endpoints (a real TLS server with a
 * throwaway self-signed certificate, trusted through the endpoint's test-only `ca`; without it the
 * default CA verification refuses it).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { STREAM_HEAD_BYTES, STREAM_HIGH_WATER } from '../../src/http1/client/client-exchange.js';
import { BufferPool, type EndpointPool, READ_BYTES } from '../../src/http1/index.js';
import { makeSelfSignedCert } from '../helpers/tls.js';
import { clientFor, post, type UrlClient } from './client-fixture.js';
import { waitFor } from './servers.js';

const MiB = 1_048_576;
const pools: EndpointPool[] = [];
const closers: Array<() => void> = [];
after(() => {
  for (const pool of pools) pool.destroy();
  for (const close of closers) close();
});

function client(url: string, ca?: string): UrlClient {
  const made = clientFor(url, { connections: 2, connectTimeoutMs: 2_000, buffers: new BufferPool(), ca });
  pools.push(made.pool);
  return made;
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

async function readAll(rest: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of rest) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface Sender {
  /** Bytes of the latest answer handed to the socket. */
  written: number;
  blocked: boolean;
  closedEarly: boolean;
}

/** An origin sending `payload` in 64 KiB writes that respect its own backpressure, recording how far it got. */
async function largeOrigin(payload: Buffer, chunked: boolean): Promise<{ url: string; sender: Sender }> {
  const sender: Sender = { written: 0, blocked: false, closedEarly: false };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, chunked ? {} : { 'content-length': payload.length });
      res.on('close', () => {
        sender.closedEarly = !res.writableFinished;
      });
      let at = 0;
      const pump = (): void => {
        while (at < payload.length) {
          const piece = payload.subarray(at, at + 65_536);
          at += piece.length;
          sender.written = at;
          if (!res.write(piece)) {
            sender.blocked = true;
            res.once('drain', () => {
              sender.blocked = false;
              pump();
            });
            return;
          }
        }
        res.end();
      };
      pump();
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, sender };
}

describe('http1 client: large answers stream', () => {
  it('with backpressure: the origin is held while nobody reads; the bytes arrive exact', async () => {
    const payload = randomBytes(24 * MiB);
    const { url, sender } = await largeOrigin(payload, false);
    const target = client(url);
    const res = await post(target, Buffer.from('{}'), 10_000, { streamAfter: MiB }).response;
    assert.equal(res.status, 200);
    assert.equal(res.length, payload.length);
    const rest = res.rest;
    assert.ok(rest, 'a body over streamAfter resolves with rest');
    // The head is the first STREAM_HEAD_BYTES; what else came before streaming leads `rest`.
    assert.equal(res.body.length, STREAM_HEAD_BYTES);
    assert.ok(res.body.length + rest.readableLength > MiB, 'streaming started past streamAfter');
    // Nobody reads `rest`: the client's buffer fills, its socket pauses, and the origin gets stuck.
    await waitFor(() => sender.blocked && rest.readableLength >= STREAM_HIGH_WATER, 'the origin to be held back');
    assert.ok(sender.written < payload.length, 'the origin could not send everything');
    // Held at most: what came before streaming (streamAfter and one read) and one read past the high water.
    const held = res.body.length + rest.readableLength;
    assert.ok(held < MiB + STREAM_HIGH_WATER + 2 * READ_BYTES, `client buffered ${held} bytes`);
    const whole = Buffer.concat([res.body, await readAll(rest)]);
    assert.ok(whole.equals(payload), 'streamed bytes differ');
    assert.equal(sender.closedEarly, false);
  });

  it('chunked answers stream byte-exact, and the connection is reused afterwards', async () => {
    const payload = randomBytes(3 * MiB);
    const { url } = await largeOrigin(payload, true);
    const target = client(url);
    for (let i = 0; i < 2; i += 1) {
      const res = await post(target, Buffer.from('{}'), 10_000, { streamAfter: MiB }).response;
      assert.equal(res.length, undefined);
      assert.ok(res.rest);
      assert.ok(Buffer.concat([res.body, await readAll(res.rest)]).equals(payload));
    }
    assert.equal(target.pool.size, 1);
  });

  it('an answer whose first bytes arrive in small pieces streams with exactly its first bytes as head', async () => {
    const payload = randomBytes(256 * 1024);
    const server = http.createServer(async (_req, res) => {
      res.writeHead(200, { 'content-length': payload.length });
      // The first 16 KiB in 700-byte writes, each after a turn of the event loop: separate reads, and
      // the head's end falls inside one of them.
      let at = 0;
      for (; at < 16 * 1024; at += 700) {
        res.write(payload.subarray(at, at + 700));
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end(payload.subarray(at));
    });
    const port = await listen(server);
    const target = client(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 3; i += 1) {
      const res = await post(target, Buffer.from('{}'), 10_000, { streamAfter: 8 * 1024 }).response;
      assert.ok(res.rest, 'a body over streamAfter resolves with rest');
      assert.equal(res.body.length, STREAM_HEAD_BYTES);
      // Let later reads land before reading on: bytes of the split piece must not have been overwritten.
      const rest = res.rest;
      await waitFor(() => rest.readableLength >= 128 * 1024, 'more of the answer to arrive');
      assert.ok(Buffer.concat([res.body, await readAll(rest)]).equals(payload), `answer ${i} differs`);
    }
  });

  it('destroying rest before the end closes the origin connection', async () => {
    const payload = randomBytes(24 * MiB);
    const { url, sender } = await largeOrigin(payload, false);
    const target = client(url);
    const res = await post(target, Buffer.from('{}'), 10_000, { streamAfter: MiB }).response;
    assert.ok(res.rest);
    res.rest.destroy();
    await waitFor(() => sender.closedEarly, 'the origin to see its connection closed');
    assert.equal(target.pool.size, 0);
  });
});

describe('http1 client: https endpoints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-origin-tls-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const good = makeSelfSignedCert(mkdtempSync(join(dir, 'good-')), '/CN=localhost', '127.0.0.1');
  const other = makeSelfSignedCert(mkdtempSync(join(dir, 'other-')), '/CN=elsewhere', '127.0.0.2');

  async function tlsOrigin(cert: { cert: string; key: string }) {
    const state = { handshakes: 0, servernames: [] as Array<string | false | null> };
    const server = https.createServer({ cert: readFileSync(cert.cert), key: readFileSync(cert.key) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`tls:${Buffer.concat(chunks).toString()}`));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      state.handshakes += 1;
      state.servernames.push(socket.servername);
    });
    const port = await listen(server);
    return { ...state, state, url: `https://127.0.0.1:${port}` };
  }

  it('a trusted certificate: answers over TLS on one reused connection, no SNI for an IP address', async () => {
    const origin = await tlsOrigin(good);
    const target = client(`${origin.url}/rpc`, readFileSync(good.cert, 'utf8'));
    for (let i = 0; i < 5; i += 1) {
      const res = await post(target, Buffer.from(`{"i":${i}}`), 5_000).response;
      assert.equal(res.body.toString(), `tls:{"i":${i}}`);
    }
    assert.equal(origin.state.handshakes, 1);
    assert.deepEqual(origin.state.servernames, [false]);
  });

  it('default CA verification refuses a self-signed origin (a never-connected error code)', async () => {
    const origin = await tlsOrigin(good);
    const target = client(origin.url);
    await assert.rejects(post(target, Buffer.from('{}'), 5_000).response, { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  });

  it('a certificate for another address is refused', async () => {
    const origin = await tlsOrigin(other);
    const target = client(origin.url, readFileSync(other.cert, 'utf8'));
    await assert.rejects(post(target, Buffer.from('{}'), 5_000).response, { code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });
});
