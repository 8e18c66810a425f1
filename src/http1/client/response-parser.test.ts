/**
 * The response parser against a corpus of answers, each fed whole, split in two at every byte
 * boundary, and one byte at a time: every way of splitting must give the same outcome (status, length,
 * body bytes, reuse verdict, error code), through an input buffer the caller reuses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_HEAD_BYTES, MAX_HEADER_LINES, ResponseParser } from './response-parser.js';

interface Outcome {
  status?: number;
  length?: number | undefined;
  body: string;
  ended: boolean;
  /** Bytes after the end of the answer (unexpected on a connection without pipelining). */
  extra: number;
  error?: string;
  reusable?: boolean;
  keepAliveMs?: number | undefined;
  /** Set only when the head carried a usable Location. */
  location?: string;
}

/**
 * Feeds `pieces` (then end of input when `eof`); bytes after the answer's end are counted, not parsed.
 * Every piece goes through one input buffer that is overwritten after each call, as the connection's
 * shared read buffer is: a parser that kept a view of its input would see garbage.
 */
function feed(pieces: Buffer[], eof: boolean, forHead = false): Outcome {
  const input = Buffer.alloc(Math.max(0, ...pieces.map((piece) => piece.length)));
  const outcome: Outcome = { body: '', ended: false, extra: 0 };
  const parser = new ResponseParser({
    onResponseHead(status, length, location) {
      outcome.status = status;
      outcome.length = length;
      if (location !== undefined) outcome.location = location;
    },
    onResponseData(chunk) {
      outcome.body += chunk.toString('latin1');
    },
    onResponseEnd() {
      outcome.ended = true;
    },
  });
  parser.forHead = forHead;
  try {
    for (const piece of pieces) {
      if (outcome.ended) {
        outcome.extra += piece.length;
        continue;
      }
      const view = input.subarray(0, piece.length);
      piece.copy(view);
      const used = parser.execute(view);
      view.fill('~');
      outcome.extra += piece.length - used;
    }
    if (eof && !outcome.ended) parser.finish();
  } catch (err) {
    outcome.error = (err as { code?: string }).code ?? String(err);
  }
  if (outcome.ended) {
    outcome.reusable = parser.reusable;
    outcome.keepAliveMs = parser.keepAliveMs;
  }
  return outcome;
}

/** The outcome of `raw`, checked to be the same for every way of splitting it. */
function parseEverySplit(raw: string, eof = false, forHead = false): Outcome {
  const bytes = Buffer.from(raw, 'latin1');
  const whole = feed([bytes], eof, forHead);
  for (let at = 1; at < bytes.length; at += 1) {
    const split = feed([bytes.subarray(0, at), bytes.subarray(at)], eof, forHead);
    assert.deepEqual(split, whole, `split at byte ${at} of ${JSON.stringify(raw.slice(0, 60))}`);
  }
  const bytewise = feed(
    Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)),
    eof,
    forHead,
  );
  assert.deepEqual(bytewise, whole, `fed byte by byte: ${JSON.stringify(raw.slice(0, 60))}`);
  return whole;
}

describe('response parser: well-formed answers, split anywhere', () => {
  it('Content-Length body', () => {
    const out = parseEverySplit('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello');
    assert.deepEqual(out, {
      status: 200,
      length: 5,
      body: 'hello',
      ended: true,
      extra: 0,
      reusable: true,
      keepAliveMs: undefined,
    });
  });

  it('Content-Length 0, and the same length given twice', () => {
    assert.equal(parseEverySplit('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n').ended, true);
    const twice = parseEverySplit('HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2, 2\r\n\r\nok');
    assert.equal(twice.body, 'ok');
  });

  it('chunked with extensions, upper-case and zero-padded sizes, and trailers', () => {
    const out = parseEverySplit(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '5;name=value\r\nhello\r\n' +
        '6 ; a=b;c="d e"\r\n world\r\n' +
        '00A\r\n0123456789\r\n' +
        '0;last\r\nX-Checksum: abc\r\nServer-Timing: db;dur=53\r\n\r\n',
    );
    assert.equal(out.body, 'hello world0123456789');
    assert.equal(out.length, undefined);
    assert.equal(out.ended, true);
    assert.equal(out.reusable, true);
  });

  it('close-delimited: the body runs to the end of input and the connection is not reused', () => {
    const out = parseEverySplit('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"result":1}', true);
    assert.equal(out.body, '{"result":1}');
    assert.equal(out.ended, true);
    assert.equal(out.reusable, false);
  });

  it('interim 1xx answers are skipped', () => {
    const out = parseEverySplit(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n' +
        'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    );
    assert.equal(out.status, 200);
    assert.equal(out.body, 'ok');
  });

  it('204 and 304 have no body, whatever they announce', () => {
    const noContent = parseEverySplit('HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n');
    assert.deepEqual([noContent.status, noContent.body, noContent.ended], [204, '', true]);
    const notModified = parseEverySplit('HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n');
    assert.deepEqual([notModified.status, notModified.ended], [304, true]);
  });

  it('an answer to HEAD has no body, whatever it announces, and the connection stays reusable', () => {
    for (const framing of ['Content-Length: 7', 'Transfer-Encoding: chunked', 'X-Nothing: 1']) {
      const out = parseEverySplit(`HTTP/1.1 200 OK\r\n${framing}\r\n\r\n`, false, true);
      assert.deepEqual([out.status, out.body, out.ended, out.extra, out.reusable], [200, '', true, 0, true], framing);
    }
    // The same head to a GET waits for its body.
    assert.equal(parseEverySplit('HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n').ended, false);
  });

  it('Location is handed on with the status when sent once; twice, it is no target', () => {
    const moved = parseEverySplit('HTTP/1.1 302 Found\r\nLOCATION:  /next?a=1 \r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual([moved.status, moved.location], [302, '/next?a=1']);
    const twice = parseEverySplit('HTTP/1.1 302 Found\r\nLocation: /a\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual([twice.status, twice.location], [302, undefined]);
    const headless = parseEverySplit('HTTP/1.1 204 No Content\r\nLocation: /c\r\n\r\n');
    assert.equal(headless.location, '/c');
  });

  it('reuse: Connection: close, HTTP/1.0 with and without keep-alive, Keep-Alive: timeout', () => {
    assert.equal(parseEverySplit('HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n').reusable, false);
    assert.equal(parseEverySplit('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').reusable, false);
    const kept = parseEverySplit('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n');
    assert.equal(kept.reusable, true);
    const hinted = parseEverySplit('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual([hinted.reusable, hinted.keepAliveMs], [true, 5000]);
    // Connection is a list of tokens in any case; one token is matched whole, not as a prefix.
    const reuse = (connection: string, version = '1.1') =>
      parseEverySplit(`HTTP/${version} 200 OK\r\nConnection: ${connection}\r\nContent-Length: 0\r\n\r\n`).reusable;
    assert.equal(reuse('keep-alive, close'), false);
    assert.equal(reuse('CLOSE'), false);
    assert.equal(reuse('closed'), true);
    assert.equal(reuse('clos'), true);
    assert.equal(reuse('KEEP-ALIVE', '1.0'), true);
    assert.equal(reuse('upgrade, Keep-Alive', '1.0'), true);
    assert.equal(reuse('keep-alives', '1.0'), false);
  });

  it('bytes after the end of an answer are reported, not parsed', () => {
    const out = parseEverySplit('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n');
    assert.deepEqual([out.body, out.extra], ['ok', 17]);
  });

  it('one parser reads consecutive answers of a keep-alive connection', () => {
    const answers: string[] = [];
    let body = '';
    const parser = new ResponseParser({
      onResponseHead() {},
      onResponseData(chunk) {
        body += chunk.toString();
      },
      onResponseEnd() {
        answers.push(body);
        body = '';
      },
    });
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n'));
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb'));
    assert.deepEqual(answers, ['a', 'b']);
  });
});

const BAD: Array<[string, string, boolean?]> = [
  ['status line of another protocol', 'HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n'],
  ['status code of two digits', 'HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n'],
  ['status out of range', 'HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n'],
  ['101 never asked for', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n'],
  ['space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok'],
  ['obs-fold', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  continued\r\nContent-Length: 2\r\n\r\nok'],
  ['a bare LF inside a header line', 'HTTP/1.1 200 OK\r\nX-A: 1\nX-B: 2\r\nContent-Length: 2\r\n\r\nok'],
  ['a header name that is not a token', 'HTTP/1.1 200 OK\r\nX(A): 1\r\nContent-Length: 2\r\n\r\nok'],
  ['a line without a colon', 'HTTP/1.1 200 OK\r\nnocolon\r\nContent-Length: 2\r\n\r\nok'],
  [
    'Transfer-Encoding with Content-Length',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n',
  ],
  ['Transfer-Encoding other than chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'],
  ['Transfer-Encoding in HTTP/1.0', 'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['two different Content-Length values', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk'],
  ['Content-Length not a number', 'HTTP/1.1 200 OK\r\nContent-Length: 2a\r\n\r\nok'],
  ['negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'],
  ['Content-Length of 16 digits', 'HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456\r\n\r\n'],
  ['Content-Length with a sign', 'HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok'],
  ['chunk size not hex', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n'],
  ['chunk line without a size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n;ext\r\nok\r\n0\r\n\r\n'],
  ['chunk size beyond 2^53', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n'],
  ['chunk data longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n'],
  ['a chunk line ended by a bare LF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n'],
  [
    'a control character in a chunk extension',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a\x01\r\nok\r\n0\r\n\r\n',
  ],
  ['a malformed trailer', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nbad trailer\r\n\r\n'],
  [
    'a head over the size limit',
    `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES)}\r\nContent-Length: 0\r\n\r\n`,
  ],
  ['too many header lines', `HTTP/1.1 200 OK\r\n${'X-A: 1\r\n'.repeat(MAX_HEADER_LINES)}Content-Length: 0\r\n\r\n`],
];

describe('response parser: malformed answers fail the same way however they are split', () => {
  for (const [name, raw] of BAD) {
    it(name, () => {
      // The large ones are only fed whole and split (one-byte feeding of 16 KiB is slow and adds nothing).
      const out = raw.length > 2000 ? feed([Buffer.from(raw, 'latin1')], false) : parseEverySplit(raw);
      assert.equal(out.error, 'ORIGIN_MALFORMED_RESPONSE', JSON.stringify(out));
      assert.equal(out.ended, false);
    });
  }

  it('an answer cut short by the end of input is ORIGIN_CLOSED (head, length body, chunked body)', () => {
    for (const raw of [
      'HTTP/1.1 200 OK\r\nContent-Le',
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Trailer: 1\r\n',
    ]) {
      assert.equal(parseEverySplit(raw, true).error, 'ORIGIN_CLOSED', raw);
    }
  });

  it('end of input before any byte of an answer is not an error of the parser', () => {
    assert.deepEqual(feed([], true), { body: '', ended: false, extra: 0 });
  });
});
