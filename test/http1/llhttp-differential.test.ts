/**
 * The listener's request parser against Node's own llhttp (the parser `node:http` runs), on identical
 * bytes: the parser tests' corpus, that corpus split at every byte, extra inputs at the edges where the
 * two are known to differ, and seeded mutations of the valid requests. For each input both parsers must
 * agree on which requests are delivered (method, target, version, the framing headers Content-Length /
 * Transfer-Encoding / Connection / Host, keep-alive, body bytes) and whether the rest is refused.
 * Every way they may disagree is listed in DIFFERENCES below with its reason (docs/gateway.md,
 * "The listener's HTTP/1.1", says the same); any other disagreement fails with the input escaped.
 *
 * Driver (llhttp-driver.ts): llhttp itself, through `HTTPParser` of Node's internal `_http_common`
 * module (no package to install; the same llhttp build and the same strict settings `node:http`
 * uses: no lenient flags, a 16 KiB head limit). It runs in-process on a Buffer, a few microseconds an input, and reports
 * llhttp's own error code, so thousands of inputs take well under a second and a difference names the
 * exact rule. A real `http.createServer` fed over a socket would add Node's checks above llhttp (the
 * Host requirement) but only show "request or 400", cost a round trip per input and depend on timing;
 * so it is not used. The module is internal: if a Node version drops it, the suite is skipped with a
 * message, not failed.
 *
 * The mutants are fixed by SEED (each failure names its seed and index); LLHTTP_DIFF_SEED and
 * LLHTTP_DIFF_MUTANTS run others, e.g. `LLHTTP_DIFF_SEED=7 LLHTTP_DIFF_MUTANTS=20000`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEAD_MAX_BYTES } from '../../src/http1/server/request-parser.js';
import { INVALID, VALID } from './corpus.js';
import { b, boundaries, compare, type Divergence, llhttp, type Outcome } from './llhttp-driver.js';
import { mulberry32, mutate } from './mutate.js';

const SEED = Number(process.env.LLHTTP_DIFF_SEED ?? 0x14);
const MUTANTS = Number(process.env.LLHTTP_DIFF_MUTANTS ?? 2_000);

// ---------------------------------------------------------------------------------------------------
// The known differences. Each names which side is stricter and why; `matches` recognises it at the
// point where the outcomes part; `examples` are inputs that must show exactly this difference.

interface Difference {
  id: string;
  stricter: 'ours' | 'llhttp';
  reason: string;
  matches(d: Divergence): boolean;
  examples: string[];
}

/** Ours refused the request at the divergence with a message containing `text` (llhttp did not refuse it). */
function oursRefused(d: Divergence, text: string): boolean {
  return d.oursMessage === undefined && d.ours.end === 'refused' && d.ours.reason.includes(text);
}

/** llhttp refused the request at the divergence with `code` (and optionally a reason containing `text`). */
function llhttpRefused(d: Divergence, code: string, text = ''): boolean {
  return (
    d.theirsMessage === undefined &&
    d.theirs.end === 'refused' &&
    d.theirs.reason.startsWith(`${code}:`) &&
    d.theirs.reason.includes(text)
  );
}

/** Both delivered request `at`, and they differ only in whether the connection is kept. */
function onlyKeepAliveDiffers(d: Divergence): boolean {
  const mine = d.oursMessage;
  const other = d.theirsMessage;
  return (
    mine !== undefined &&
    other !== undefined &&
    mine.keepAlive !== other.keepAlive &&
    JSON.stringify({ ...mine, keepAlive: other.keepAlive }) === JSON.stringify(other)
  );
}

/** The input has a Content-Length, Transfer-Encoding or Connection value ending in whitespace with an HTAB. */
function tabEnds(input: string): boolean {
  return /(^|\n)(content-length|transfer-encoding|connection):[^\r\n]*\t[ \t]*\r\n/i.test(input);
}

const POST_CHUNKED = 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n';

const DIFFERENCES: Difference[] = [
  // --- Ours refuses, llhttp accepts: the refusals parser.ts lists (smuggling vectors and limits).
  {
    id: 'missing-host',
    stricter: 'ours',
    reason:
      'RFC 9112 §3.2: an HTTP/1.1 request without Host is refused (400). llhttp does not check it; ' +
      'node:http does, above llhttp (requireHostHeader), so node:http refuses it too.',
    matches: (d) => oursRefused(d, 'must carry a Host header'),
    examples: ['GET / HTTP/1.1\r\n\r\n'],
  },
  {
    id: 'two-hosts',
    stricter: 'ours',
    reason:
      'RFC 9112 §3.2: two Host lines are refused; llhttp (and node:http, which keeps the first) accept ' +
      'them. A proxy in front might route by the other one.',
    matches: (d) => oursRefused(d, 'more than one Host header'),
    examples: ['GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
  },
  {
    id: 'transfer-encoding-in-http10',
    stricter: 'ours',
    reason:
      'RFC 9112 §6.1: a server ought to treat Transfer-Encoding in HTTP/1.0 as faulty framing, an ' +
      'HTTP/1.0 proxy in front would not read it as chunked; llhttp reads the body as chunked.',
    matches: (d) => oursRefused(d, 'not allowed in an HTTP/1.0 request'),
    examples: ['POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  },
  {
    id: 'transfer-coding-other-than-chunked-alone',
    stricter: 'ours',
    reason:
      'The listener implements no coding but chunked: `gzip, chunked` or `chunked` twice gets 501 ' +
      '(RFC 9112 §6.1 "SHOULD respond 501"). llhttp frames `gzip, chunked` by the final chunked and ' +
      'leaves decoding to the application (it refuses `chunked` twice, as ours does).',
    matches: (d) => oursRefused(d, 'unsupported-encoding'),
    examples: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'],
  },
  {
    id: 'content-length-over-15-digits',
    stricter: 'ours',
    reason:
      'A Content-Length is 1–15 digits (exact in a JS number; far beyond any body limit). llhttp ' +
      'accepts any number of digits up to a 64-bit overflow, leading zeros included.',
    matches: (d) => oursRefused(d, 'Content-Length must be 1 to 15 digits'),
    examples: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0000000000000003\r\n\r\nabc'],
  },
  {
    id: 'chunk-size-over-8-digits',
    stricter: 'ours',
    reason:
      'A chunk size is at most 8 hex digits (4 GiB, beyond any body limit); llhttp takes up to 16, ' +
      'leading zeros included.',
    matches: (d) => oursRefused(d, 'A chunk size is too long'),
    examples: [`${POST_CHUNKED}000000003\r\nabc\r\n0\r\n\r\n`],
  },
  {
    id: 'head-bytes',
    stricter: 'ours',
    reason:
      'Ours counts every byte of the head against 16 KiB (request line, header lines, CRLFs); Node ' +
      'counts only the target, header names and values, so its limit is reached some bytes later.',
    matches: (d) => oursRefused(d, 'head-too-large: The request head is larger'),
    examples: [`GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(HEAD_MAX_BYTES - 33)}\r\n\r\n`],
  },
  {
    id: 'header-lines',
    stricter: 'ours',
    reason:
      'Ours refuses more than 100 header lines (431); llhttp has no count (node:http keeps the first ' +
      '2000 headers and drops the rest silently).',
    matches: (d) => oursRefused(d, 'head-too-large: The request has more than'),
    examples: [`GET / HTTP/1.1\r\nHost: x\r\n${'X: v\r\n'.repeat(100)}\r\n`],
  },
  {
    id: 'version-other-than-1.0-1.1',
    stricter: 'ours',
    reason:
      'Only HTTP/1.0 and HTTP/1.1 are served (400 otherwise). llhttp also accepts HTTP/0.9 and ' +
      'HTTP/2.0 in a request line, and an HTTP/0.9 request line with no version at all (even ended ' +
      'by a bare LF).',
    matches: (d) =>
      (oursRefused(d, 'Only HTTP/1.1 and HTTP/1.0') ||
        oursRefused(d, 'The request line is malformed') ||
        oursRefused(d, 'ends in a bare LF')) &&
      (d.theirsHead?.version === '0.9' || d.theirsHead?.version === '2.0'),
    examples: [
      'GET / HTTP/2.0\r\nHost: x\r\n\r\n',
      'GET / HTTP/0.9\r\nHost: x\r\n\r\n',
      'GET /\r\n\r\n',
      'GET /HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /a\nHost: x\r\n\r\n',
    ],
  },
  {
    id: 'extra-spaces-in-request-line',
    stricter: 'ours',
    reason:
      'RFC 9112 §3: exactly one SP after the method and one after the target. llhttp skips any ' +
      'number of spaces there.',
    matches: (d) =>
      (oursRefused(d, 'The request line is malformed') || oursRefused(d, 'Only HTTP/1.1 and HTTP/1.0')) &&
      d.theirsHead !== undefined &&
      (d.input.includes(`${d.theirsHead.method}  `) || d.input.includes(`${d.theirsHead.target}  `)),
    examples: ['GET  / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /  HTTP/1.1\r\nHost: x\r\n\r\n'],
  },
  {
    id: 'stray-cr-or-lf-before-request-line',
    stricter: 'ours',
    reason:
      'Empty lines before a request line are skipped (RFC 9112 §2.2) but must be CRLF like every ' +
      'line; llhttp skips any run of CR and LF bytes before a request.',
    matches: (d) => {
      if (!oursRefused(d, 'ends in a bare LF') && !oursRefused(d, 'The request line is malformed')) return false;
      // The CR/LF run where ours expected request `at` to start; without it, both must agree there.
      const input = b(d.input);
      const start = d.at === 0 ? 0 : (boundaries(input)[d.at - 1] as number);
      let end = start;
      while (input[end] === 0x0d || input[end] === 0x0a) end += 1;
      if (/^(\r\n)*$/.test(d.input.slice(start, end))) return false;
      const without = compare([input.subarray(0, start), input.subarray(end)]);
      return without === undefined || without.at > d.at || classify(without) !== undefined;
    },
    examples: [
      'GET / HTTP/1.1\r\nHost: x\r\n\r\n\n',
      '\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
      '\rGET / HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na\r\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
    ],
  },

  {
    id: 'close-wins-in-http10',
    stricter: 'ours',
    reason:
      'An HTTP/1.0 request with both `Connection: close` and `keep-alive`: ours closes (RFC 9112 §9.6, ' +
      'close means the connection does not persist); llhttp looks only for keep-alive in HTTP/1.0.',
    matches: (d) =>
      onlyKeepAliveDiffers(d) && d.oursMessage?.version === '1.0' && !d.oursMessage.keepAlive && !tabEnds(d.input),
    examples: ['GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n'],
  },

  {
    id: 'empty-transfer-encoding',
    stricter: 'ours',
    reason:
      'An empty Transfer-Encoding value does not end in chunked, so ours refuses it (400, RFC 9112 ' +
      '§6.3); llhttp ignores it and reads the request as having no body, so the body bytes become the ' +
      'next request: a framing a proxy in front might not share.',
    matches: (d) =>
      oursRefused(d, 'Transfer-Encoding must end with chunked') &&
      (d.theirsHead?.framing.some((f, i, all) => f === 'transfer-encoding' && all[i + 1] === '') ?? false),
    examples: [`${POST_CHUNKED.replace('chunked', '')}3\r\nabc\r\n0\r\n\r\n`],
  },

  // --- llhttp refuses, ours accepts.
  {
    id: 'identical-content-lengths',
    stricter: 'llhttp',
    reason:
      'RFC 9112 §6.3 lets a recipient accept repeated identical Content-Length values as one; ours ' +
      'does, differing ones are refused. llhttp refuses any second Content-Length.',
    matches: (d) =>
      llhttpRefused(d, 'HPE_UNEXPECTED_CONTENT_LENGTH') &&
      (d.oursHead?.framing.filter((f) => f === 'content-length').length ?? 0) > 1,
    examples: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok'],
  },
  {
    id: 'method-not-in-llhttp-table',
    stricter: 'llhttp',
    reason:
      'Ours accepts any token as a method (RFC 9110 §9.1) and the gateway answers 405 for all but ' +
      'POST/OPTIONS; llhttp knows a fixed table of methods and refuses the rest.',
    matches: (d) =>
      llhttpRefused(d, 'HPE_INVALID_METHOD') &&
      d.oursHead !== undefined &&
      !(llhttp?.methods ?? []).includes(d.oursHead.method),
    examples: ['FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 'POSTX / HTTP/1.1\r\nHost: x\r\n\r\n'],
  },
  {
    id: 'target-form',
    stricter: 'llhttp',
    reason:
      'Ours checks only that the target is 0x21–0x7E bytes and leaves its form to routing (anything ' +
      'but the gateway paths is a 404); llhttp also parses its form and refuses e.g. `;` or `a/`.',
    matches: (d) => llhttpRefused(d, 'HPE_INVALID_URL') && d.oursHead !== undefined,
    examples: ['GET ; HTTP/1.1\r\nHost: x\r\n\r\n', 'GET a/ HTTP/1.1\r\nHost: x\r\n\r\n'],
  },
  {
    id: 'whitespace-before-chunk-extension',
    stricter: 'llhttp',
    reason:
      'RFC 9112 §7.1.1 allows BWS before `;` in a chunk extension and ours accepts it (only when an ' +
      'extension follows); llhttp in strict mode refuses any space after a chunk size.',
    matches: (d) =>
      llhttpRefused(d, 'HPE_INVALID_CHUNK_SIZE') && d.oursHead !== undefined && /\r\n[0-9a-fA-F]+[ \t]+;/.test(d.input),
    examples: [`${POST_CHUNKED}3 ;x\r\nabc\r\n0\r\n\r\n`],
  },
  {
    id: 'chunk-extension-bytes',
    stricter: 'llhttp',
    reason:
      'Ours ignores chunk extensions and checks only that they hold no control byte; llhttp parses ' +
      'their name=value syntax (no space, quoted strings…).',
    matches: (d) => llhttpRefused(d, 'HPE_STRICT', 'chunk extension') && d.oursHead !== undefined,
    examples: [`${POST_CHUNKED}3;a= b\r\nabc\r\n0\r\n\r\n`],
  },
  {
    id: 'framing-field-in-trailers',
    stricter: 'llhttp',
    reason:
      'Ours reads trailer lines only for their syntax and drops them, so they never change framing or ' +
      'the connection; llhttp reads them like header fields: it refuses a Content-Length or ' +
      'Transfer-Encoding there, and applies `Connection: close` (then refuses a next request).',
    matches: (d) =>
      d.oursHead !== undefined &&
      (d.theirsMessage === undefined || onlyKeepAliveDiffers(d)) &&
      /\r\n0+(;[^\r\n]*)?\r\n([^\r\n]+\r\n)*?(content-length|transfer-encoding|connection)[ \t]*:/i.test(d.input),
    examples: [
      `${POST_CHUNKED}0\r\nContent-Length: 5\r\n\r\n`,
      `${POST_CHUNKED}0\r\nTransfer-Encoding: identity\r\n\r\n`,
      `${POST_CHUNKED}0\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n`,
    ],
  },

  {
    id: 'trailing-tab-in-framing-value',
    stricter: 'llhttp',
    reason:
      'A field value ends in optional whitespace, SP or HTAB (RFC 9110 §5.5), and ours trims both. ' +
      'llhttp trims a trailing SP but not HTAB in the values it reads itself: it refuses ' +
      '`Content-Length: 3<HTAB>` and `Transfer-Encoding: chunked<HTAB>`, and ignores `close<HTAB>` or ' +
      '`keep-alive<HTAB>` in Connection (so the connection is kept or closed contrary to the header).',
    matches: (d) =>
      tabEnds(d.input) &&
      (onlyKeepAliveDiffers(d) ||
        (d.oursHead !== undefined &&
          (llhttpRefused(d, 'HPE_INVALID_CONTENT_LENGTH') || llhttpRefused(d, 'HPE_INVALID_TRANSFER_ENCODING')))),
    examples: [
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\t\r\n\r\nabc',
      `${POST_CHUNKED.replace('chunked', 'chunked\t')}0\r\n\r\n`,
      'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\t\r\n\r\n',
      'GET / HTTP/1.0\r\nConnection: keep-alive\t\r\n\r\n',
    ],
  },

  // --- Different models.
  {
    id: 'upgrade',
    stricter: 'llhttp',
    reason:
      'The listener has no protocol upgrade: a request with `Connection: upgrade` + `Upgrade`, or ' +
      'CONNECT, is an ordinary request (then 404/405). llhttp ends parsing after its head and hands ' +
      'the connection over, so it reads neither a body nor a next request.',
    matches: (d) => d.theirs.end === 'upgrade' && d.at === d.theirs.messages.length,
    examples: [
      'GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: ws\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
      'CONNECT x:443 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na',
    ],
  },
];

function classify(d: Divergence): Difference | undefined {
  return DIFFERENCES.find((difference) => difference.matches(d));
}

function show(d: Divergence): string {
  const side = (o: Outcome) => `${o.messages.length} message(s), ${o.end}${o.reason ? ` (${o.reason})` : ''}`;
  return (
    `${JSON.stringify(d.input)}\n  at message ${d.at}: ours ${JSON.stringify(d.oursMessage)}, ` +
    `llhttp ${JSON.stringify(d.theirsMessage)}\n  ours: ${side(d.ours)}\n  llhttp: ${side(d.theirs)}`
  );
}

/** Runs `inputs` (each as pieces) and returns the unexplained divergences and a tally of known ones. */
function run(inputs: Iterable<[string, Buffer[]]>): { unexplained: string[]; tally: Map<string, number> } {
  const unexplained: string[] = [];
  const tally = new Map<string, number>();
  for (const [name, pieces] of inputs) {
    const d = compare(pieces);
    if (d === undefined) continue;
    const known = classify(d);
    if (known === undefined) unexplained.push(`${name}: ${show(d)}`);
    else tally.set(known.id, (tally.get(known.id) ?? 0) + 1);
  }
  return { unexplained, tally };
}

function assertExplained(unexplained: string[]): void {
  assert.equal(
    unexplained.length,
    0,
    `${unexplained.length} difference(s) not in DIFFERENCES:\n${unexplained.slice(0, 10).join('\n')}`,
  );
}

/** `count` mutants of the valid requests, each cut at 0–2 random places (the same cuts for both parsers). */
function* mutants(seed: number, count: number): Generator<[string, Buffer[]]> {
  const random = mulberry32(seed);
  const seeds = Object.values(VALID).map(b);
  for (let i = 0; i < count; i += 1) {
    const input = mutate(seeds[Math.floor(random() * seeds.length)] as Buffer, random);
    const cuts = Array.from({ length: Math.floor(random() * 3) }, () => Math.floor(random() * input.length)).sort(
      (x, y) => x - y,
    );
    const pieces: Buffer[] = [];
    let from = 0;
    for (const cut of cuts) {
      pieces.push(input.subarray(from, cut));
      from = cut;
    }
    pieces.push(input.subarray(from));
    yield [`seed ${seed} mutant ${i}`, pieces];
  }
}

describe('the request parser against llhttp', { skip: llhttp === undefined && "Node's _http_common is absent" }, () => {
  it('delivers the same requests from every valid input of the corpus, whole and split at every byte', () => {
    function* inputs(): Generator<[string, Buffer[]]> {
      for (const [name, text] of Object.entries(VALID)) {
        const whole = b(text);
        yield [name, [whole]];
        for (let i = 1; i < whole.length; i += 1) {
          yield [`${name} split at ${i}`, [whole.subarray(0, i), whole.subarray(i)]];
        }
      }
    }
    const { unexplained, tally } = run(inputs());
    assertExplained(unexplained);
    // The valid corpus differs only where llhttp is stricter.
    assert.deepEqual(
      [...tally.keys()].sort(),
      ['identical-content-lengths', 'whitespace-before-chunk-extension'],
      'differences on the valid corpus',
    );
  });

  it('refuses what the corpus says to refuse, or differs only as DIFFERENCES says', () => {
    const { unexplained } = run(Object.entries(INVALID).map(([name, [text]]) => [name, [b(text)]]));
    assertExplained(unexplained);
  });

  it('shows each listed difference on its examples, and nothing else there', () => {
    for (const difference of DIFFERENCES) {
      for (const example of difference.examples) {
        const d = compare([b(example)]);
        assert.ok(d !== undefined, `${difference.id}: both parsers agree on ${JSON.stringify(example)}`);
        assert.equal(classify(d)?.id, difference.id, `${difference.id}: ${show(d)}`);
      }
    }
  });

  it('agrees at the limits it shares: a head at exactly 16 KiB is read by both', () => {
    const prefix = 'GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ';
    const exact = prefix + 'a'.repeat(HEAD_MAX_BYTES - prefix.length - 4) + '\r\n\r\n';
    assert.equal(exact.length, HEAD_MAX_BYTES);
    assert.equal(compare([b(exact)]), undefined);
    assert.equal(compare([b(`GET / HTTP/1.1\r\nHost: x\r\n${'X: v\r\n'.repeat(99)}\r\n`)]), undefined);
  });

  it(`differs only as DIFFERENCES says on ${MUTANTS} seeded mutants of the valid requests`, (t) => {
    const { unexplained, tally } = run(mutants(SEED, MUTANTS));
    t.diagnostic(`known differences: ${JSON.stringify(Object.fromEntries(tally))}`);
    assertExplained(unexplained);
  });
});
