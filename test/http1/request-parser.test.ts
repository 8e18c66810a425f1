/**
 * The request parser on its own: a corpus of valid and invalid requests gives the same events whether
 * fed whole, split at every byte boundary, or one byte at a time; each request-smuggling vector is
 * refused with its kind; limits; chunked bodies (extensions ignored, trailers dropped); HTTP/1.0.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HEAD_MAX_BYTES,
  type ParserSink,
  type RequestHead,
  RequestParser,
} from '../../src/http1/server/request-parser.js';
import type { RequestRefusal } from '../../src/http1/server/request-refusal.js';
import { INVALID, VALID } from './corpus.js';

interface Parsed {
  method: string;
  target: string;
  minor: number;
  headers: string[];
  keepAlive: boolean;
  expectContinue: boolean;
  contentLength: number;
  body: string;
  complete: boolean;
}

interface Outcome {
  requests: Parsed[];
  error?: RequestRefusal['kind'];
}

class Recorder implements ParserSink {
  readonly outcome: Outcome = { requests: [] };
  #current: Parsed | undefined;
  requestStarted(): void {}
  head(head: RequestHead): void {
    this.#current = { ...head, headers: [...head.headers], body: '', complete: false };
    this.outcome.requests.push(this.#current);
  }
  body(piece: Buffer): void {
    (this.#current as Parsed).body += piece.toString('latin1');
  }
  complete(): boolean {
    (this.#current as Parsed).complete = true;
    return false;
  }
  fail(error: RequestRefusal): void {
    this.outcome.error = error.kind;
  }
}

const LIMIT = 1000;

function parse(pieces: Buffer[], limit = LIMIT): Outcome {
  const recorder = new Recorder();
  const parser = new RequestParser(recorder, limit);
  for (const piece of pieces) parser.execute(piece);
  return recorder.outcome;
}

const b = (text: string) => Buffer.from(text, 'latin1');

function everySplit(text: string, check: (pieces: Buffer[], at: string) => void): void {
  const whole = b(text);
  for (let i = 1; i < whole.length; i += 1) check([whole.subarray(0, i), whole.subarray(i)], `split at ${i}`);
  check(
    Array.from(whole, (_, i) => whole.subarray(i, i + 1)),
    'one byte at a time',
  );
}

describe('RequestParser', () => {
  it('parses each valid request the same whole, split at every byte, and byte by byte', () => {
    for (const [name, text] of Object.entries(VALID)) {
      const whole = parse([b(text)]);
      assert.equal(whole.error, undefined, `${name}: ${whole.error}`);
      assert.ok(whole.requests.length > 0 && whole.requests.every((r) => r.complete), name);
      everySplit(text, (pieces, at) => assert.deepEqual(parse(pieces), whole, `${name}, ${at}`));
    }
  });

  it('refuses each invalid request with its kind, however it is split', () => {
    for (const [name, [text, kind]] of Object.entries(INVALID)) {
      const whole = parse([b(text)]);
      assert.equal(whole.error, kind, name);
      assert.ok(
        whole.requests.every((r) => !r.complete),
        `${name}: nothing is completed before the refusal`,
      );
      everySplit(text, (pieces, at) => assert.deepEqual(parse(pieces), whole, `${name}, ${at}`));
    }
  });

  it('reads heads: lowercase names, trimmed latin1 values, method, target, version', () => {
    const [get] = parse([b(VALID.spacesAroundValue as string)]).requests;
    assert.deepEqual(get?.headers, ['host', 'x', 'x-empty', '', 'x-latin', 'caf\xe9']);
    const [post] = parse([b(VALID.post as string)]).requests;
    assert.equal(post?.method, 'POST');
    assert.equal(post?.target, '/v1/sepolia');
    assert.equal(post?.body, '{"a":"bc"}\n');
    assert.equal(post?.contentLength, 11);
  });

  it('reads chunked bodies, ignoring extensions and dropping trailers', () => {
    const [request] = parse([b(VALID.chunked as string)]).requests;
    assert.equal(request?.body, 'hello!');
    assert.equal(request?.contentLength, -1);
    assert.ok(!request?.headers.includes('x-trailer'));
  });

  it('reads pipelined requests one after the other', () => {
    const { requests } = parse([b(VALID.pipelined as string)]);
    assert.deepEqual(
      requests.map((r) => [r.method, r.target, r.body]),
      [
        ['POST', '/a', 'abc'],
        ['GET', '/b', ''],
        ['POST', '/c', 'xyz'],
      ],
    );
  });

  it('keeps HTTP/1.1 alive unless Connection: close; HTTP/1.0 only when asked; Expect only in 1.1', () => {
    assert.equal(parse([b(VALID.get as string)]).requests[0]?.keepAlive, true);
    assert.equal(parse([b(VALID.close as string)]).requests[0]?.keepAlive, false);
    assert.equal(parse([b(VALID.http10 as string)]).requests[0]?.keepAlive, false);
    assert.equal(parse([b(VALID.http10 as string)]).requests[0]?.minor, 0);
    assert.equal(parse([b(VALID.http10KeepAlive as string)]).requests[0]?.keepAlive, true);
    assert.equal(parse([b(VALID.expect as string)]).requests[0]?.expectContinue, true);
    const expect10 = 'POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\na';
    assert.equal(parse([b(expect10)]).requests[0]?.expectContinue, false);
  });

  it('limits the head to 16 KiB and 100 header lines (431), allowing exactly the limits', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `X-H${i}: v\r\n`).join('');
    assert.equal(parse([b(`GET / HTTP/1.1\r\nHost: x\r\n${lines(99)}\r\n`)]).error, undefined);
    assert.equal(parse([b(`GET / HTTP/1.1\r\nHost: x\r\n${lines(100)}\r\n`)]).error, 'head-too-large');
    const prefix = 'GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ';
    const exact = prefix + 'a'.repeat(HEAD_MAX_BYTES - prefix.length - 4) + '\r\n\r\n';
    assert.equal(Buffer.byteLength(exact), HEAD_MAX_BYTES);
    assert.equal(parse([b(exact)]).error, undefined);
    const over = prefix + 'a'.repeat(HEAD_MAX_BYTES - prefix.length - 3) + '\r\n\r\n';
    assert.equal(parse([b(over)]).error, 'head-too-large');
    // A head that never ends is refused once it passes the limit, not buffered on.
    const endless = parse([b('GET / HTTP/1.1\r\nX: '), b('a'.repeat(HEAD_MAX_BYTES))]);
    assert.equal(endless.error, 'head-too-large');
  });

  it('refuses a body over the limit before reading it (declared) or before the chunk that passes it', () => {
    const declared = parse([b('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n')]);
    assert.equal(declared.error, 'body-too-large');
    assert.equal(declared.requests.length, 1, 'the head is reported first (the gateway checks path etc. before 413)');
    const atLimit = parse([b(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n${'a'.repeat(1000)}`)]);
    assert.equal(atLimit.error, undefined);
    const chunked = parse([b(INVALID.chunkedTooLarge?.[0] as string)]);
    assert.equal(chunked.requests[0]?.body.length, 500, 'the chunk that would pass the limit is not read');
  });

  it('reads nothing after stop() or after an error', () => {
    const recorder = new Recorder();
    const parser = new RequestParser(recorder, LIMIT);
    parser.execute(b(INVALID.obsFold?.[0] as string));
    parser.execute(b(VALID.get as string));
    assert.equal(recorder.outcome.requests.length, 0);
    assert.ok(parser.stopped);
  });

  it('pauses after a request when the sink asks, returning the offset to resume from', () => {
    const heads: string[] = [];
    const sink: ParserSink = {
      requestStarted() {},
      head: (head) => heads.push(head.target),
      body() {},
      complete: () => true,
      fail: (error) => assert.fail(error.message),
    };
    const parser = new RequestParser(sink, LIMIT);
    const two = b('GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
    const used = parser.execute(two);
    assert.equal(used, two.length / 2);
    assert.deepEqual(heads, ['/1']);
    assert.equal(parser.execute(two.subarray(used)), two.length / 2);
    assert.deepEqual(heads, ['/1', '/2']);
  });
});
