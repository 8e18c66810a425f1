import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../../clock.js';
import { createLogger } from '../../../log.js';
import type { Candidate } from '../../../routing/router.js';
import type { UpstreamReply, UpstreamRequest } from '../../rpc/forwarder.js';
import { ownCall } from '../../rpc/request.js';
import { chunksOf, halves, joinElements, SplitQuery } from './logs-chunks.js';
import type { CalledAnswer, HookUpstream } from './method-hook.js';

/** An answer `[<from>,…,<to>]` (each block number as a "log") to a chunk call, whole. */
function logsAnswer(request: UpstreamRequest): UpstreamReply {
  const filter = (request.call.params as [{ fromBlock: string; toBlock: string }])[0];
  const blocks: number[] = [];
  for (let n = Number(filter.fromBlock); n <= Number(filter.toBlock); n += 1) blocks.push(n);
  const head = '{"jsonrpc":"2.0","id":1,"result":';
  const body = Buffer.from(`${head}[${blocks.join(',')}]}`);
  return {
    body,
    id: { start: 22, end: 23 },
    pool: 'p',
    origin: 'o',
    outcome: { key: 'result', value: { kind: 'array', start: head.length, end: body.length - 1 } },
  };
}

/** A HookUpstream whose calls wait until the test answers them (`pending`), counting them. */
function heldUpstream() {
  const pending: Array<{ request: UpstreamRequest; answer: () => void }> = [];
  let inFlight = 0;
  let most = 0;
  const upstream: HookUpstream = {
    clock: systemClock,
    logger: createLogger({ level: 'silent' }),
    streamSlots: undefined,
    streamAfter: 1_048_576,
    settings: () => undefined,
    networkHead: () => undefined,
    call: (request) =>
      new Promise<CalledAnswer>((resolve) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        pending.push({
          request,
          answer: () => {
            inFlight -= 1;
            resolve({ reply: logsAnswer(request), candidate: {} as Candidate });
          },
        });
      }),
    callOn: () => Promise.reject(new Error('not used')),
    origins: () => [],
    stick: () => undefined,
  };
  return { upstream, pending, most: () => most };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('split eth_getLogs ranges', () => {
  it('chunks cover the range in order; halves split it in two', () => {
    assert.deepEqual(chunksOf({ from: 10, to: 34 }, 10), [
      { from: 10, to: 19 },
      { from: 20, to: 29 },
      { from: 30, to: 34 },
    ]);
    assert.deepEqual(chunksOf({ from: 5, to: 5 }, 10), [{ from: 5, to: 5 }]);
    assert.deepEqual(halves({ from: 10, to: 14 }), [
      { from: 10, to: 12 },
      { from: 13, to: 14 },
    ]);
    assert.deepEqual(halves({ from: 7, to: 8 }), [
      { from: 7, to: 7 },
      { from: 8, to: 8 },
    ]);
  });

  it('log elements join with commas, empty ones left out', () => {
    const joined = joinElements([Buffer.from('{"a":1}'), Buffer.alloc(0), Buffer.from('{"b":2},{"c":3}')]);
    assert.equal(joined.toString(), '{"a":1},{"b":2},{"c":3}');
    assert.equal(joinElements([Buffer.alloc(0)]).length, 0);
  });

  it('at most `concurrency` requests at once, and none more than `concurrency` pieces ahead of the reader', async () => {
    const held = heldUpstream();
    const request = { network: 'n', pools: [], call: ownCall('eth_getLogs', [{}]) };
    const ranges = chunksOf({ from: 0, to: 99 }, 10);
    const query = new SplitQuery(held.upstream, request, { filter: {}, ranges, concurrency: 3 }, () => false);
    const first = query.next();
    await settle();
    assert.equal(held.pending.length, 3, 'three chunks asked for the first piece');
    held.pending[1]?.answer();
    held.pending[2]?.answer();
    await settle();
    assert.equal(held.pending.length, 3, 'nothing more while the first piece is not taken');
    held.pending[0]?.answer();
    const piece = await first;
    assert.equal(piece?.kind === 'logs' && piece.elements.toString(), '0,1,2,3,4,5,6,7,8,9');
    // The reader took one: one more chunk may start.
    const second = query.next();
    await settle();
    assert.equal(held.pending.length, 4);
    assert.equal((await second)?.kind, 'logs');
    assert.equal(held.most(), 3);
    query.stop();
  });
});
