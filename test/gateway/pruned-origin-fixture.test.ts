/**
 * The pruned-origin fixture (test/helpers/pruned-origin.ts) in front of a real anvil with 10 blocks:
 * state reads pinned below `earliest` get geth's or erigon's real missing-state error (which the
 * missing-data table recognises), everything else is anvil's own answer byte for byte, ids come back as
 * sent, batches keep their order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { missingData } from '../../src/chain/missing-data.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { post, type RpcAnswer, rpc } from '../helpers/http.js';
import { type PrunedOrigin, startPrunedOrigin } from '../helpers/pruned-origin.js';

const ADDRESS = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const EARLIEST = 5;

interface Block {
  number: string;
  hash: string;
  stateRoot: string;
}

describe('pruned-origin fixture', () => {
  let anvil: AnvilNode;
  let geth: PrunedOrigin;
  let erigon: PrunedOrigin;
  const blocks: Block[] = [];

  before(async () => {
    anvil = await startTestAnvil();
    await rpc(anvil.url, 'anvil_mine', ['0xa']);
    for (let n = 0; n <= 10; n += 1) {
      blocks.push(
        (await rpc(anvil.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).answer.result as Block,
      );
    }
    geth = await startPrunedOrigin({ upstream: anvil.url, earliest: EARLIEST, flavour: 'geth' });
    erigon = await startPrunedOrigin({ upstream: anvil.url, earliest: EARLIEST, flavour: 'erigon' });
  });
  after(async () => {
    await geth?.close();
    await erigon?.close();
    await anvil?.stop();
  });

  it('answers a read below earliest with geth’s error, HTTP 200, id as sent, and the table knows it', async () => {
    const before = geth.missingAnswers;
    const res = await post(
      geth.url,
      `{"jsonrpc":"2.0","id":18446744073709551615,"method":"eth_getBalance","params":["${ADDRESS}","0x2"]}`,
    );
    assert.equal(res.status, 200);
    const root = blocks[2]?.stateRoot.slice(2);
    assert.equal(
      res.text,
      `{"jsonrpc":"2.0","id":18446744073709551615,"error":{"code":-32000,"message":"historical state ${root} is not available"}}\n`,
    );
    assert.deepEqual(missingData(res.json<RpcAnswer>().error ?? {}), {
      row: 'historical-state-unavailable',
      meaning: 'state',
      clients: ['geth'],
    });
    assert.equal(geth.missingAnswers, before + 1);
  });

  it('answers erigon’s error in the erigon flavour', async () => {
    const res = await post(
      erigon.url,
      `{"jsonrpc":"2.0","id":"e-1","method":"eth_getCode","params":["${ADDRESS}","0x1"]}`,
    );
    assert.equal(
      res.text,
      '{"jsonrpc":"2.0","id":"e-1","error":{"code":-32000,"message":"old data not available due to pruning"}}\n',
    );
    assert.equal(missingData(res.json<RpcAnswer>().error ?? {})?.row, 'erigon-pruned');
  });

  it('covers every state read and every way to pin a block below earliest', async () => {
    const old = blocks[1] as Block;
    const calls: Array<[string, unknown[]]> = [
      ['eth_getBalance', [ADDRESS, 'earliest']],
      ['eth_getTransactionCount', [ADDRESS, { blockNumber: '0x4' }]],
      ['eth_getCode', [ADDRESS, old.hash]],
      ['eth_getStorageAt', [ADDRESS, '0x0', { blockHash: old.hash }]],
      ['eth_call', [{ to: ADDRESS, data: '0x' }, '0x3']],
      ['eth_estimateGas', [{ from: ADDRESS, to: ADDRESS }, '0x1']],
      ['eth_createAccessList', [{ from: ADDRESS, to: ADDRESS }, '0x1']],
      ['eth_getProof', [ADDRESS, [], '0x0']],
    ];
    for (const [method, params] of calls) {
      const { answer } = await rpc(erigon.url, method, params, 7);
      assert.equal(answer.id, 7, method);
      assert.equal(answer.error?.message, 'old data not available due to pruning', method);
    }
  });

  it('forwards reads at or above earliest, head-relative reads and other methods to anvil byte for byte', async () => {
    const bodies = [
      `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["${ADDRESS}","0x5"]}`,
      `{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["${ADDRESS}",{"blockHash":"${blocks[7]?.hash}"}]}`,
      `{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["${ADDRESS}","latest"]}`,
      `{"jsonrpc":"2.0","id":4,"method":"eth_call","params":[{"to":"${ADDRESS}","data":"0x"}]}`,
      '{"jsonrpc":"2.0","id":5,"method":"eth_getBlockByNumber","params":["0x1",false]}',
      '{"jsonrpc":"2.0","id":6,"method":"eth_blockNumber","params":[]}',
      // Above anvil's head, and a hash anvil never saw: anvil's own answers.
      `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["${ADDRESS}","0x64"]}`,
      `{"jsonrpc":"2.0","id":8,"method":"eth_getBalance","params":["${ADDRESS}","0x${'11'.repeat(32)}"]}`,
    ];
    for (const body of bodies) {
      const direct = await post(anvil.url, body);
      const through = await post(geth.url, body);
      assert.equal(through.status, direct.status, body);
      assert.equal(through.text, direct.text, body);
    }
  });

  it('answers batches in order with ids as sent: pruned calls here, the rest from anvil', async () => {
    const body =
      '[' +
      `{"jsonrpc":"2.0","id":"a","method":"eth_getBalance","params":["${ADDRESS}","0x1"]},` +
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"eth_blockNumber","params":[]},' +
      `{"jsonrpc":"2.0","method":"eth_getBalance","params":["${ADDRESS}","0x1"]},` +
      `{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["${ADDRESS}","latest"]}` +
      ']';
    const before = geth.missingAnswers;
    const res = await post(geth.url, body);
    assert.equal(res.status, 200);
    const answers = res.json<RpcAnswer[]>();
    assert.equal(answers.length, 3, 'no answer for the notification');
    assert.equal(answers[0]?.id, 'a');
    assert.match(answers[0]?.error?.message ?? '', /^historical state [0-9a-f]{64} is not available$/);
    assert.match(res.text, /"id":9007199254740993,"result":"0xa"/);
    assert.equal(answers[2]?.id, 3);
    assert.match(String(answers[2]?.result), /^0x[0-9a-f]+$/);
    assert.equal(geth.missingAnswers, before + 1);
  });

  it('moves the window with setEarliest', async () => {
    const read = () => rpc(geth.url, 'eth_getBalance', [ADDRESS, '0x8']);
    assert.equal((await read()).answer.error, undefined);
    geth.setEarliest(9);
    assert.match((await read()).answer.error?.message ?? '', /historical state/);
    geth.setEarliest(EARLIEST);
    assert.equal((await read()).answer.error, undefined);
  });
});
