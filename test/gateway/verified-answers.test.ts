/**
 * Answers that can be proven (SPEC §18), in a whole Switchyard against a real anvil chain with contracts
 * (test/helpers/proof-chain.ts: the Reader reads several slots and calls the Vault; an Emitter logs).
 * Each network's first pool is a lying proxy in front of the node (test/helpers/lying-origin.ts), whose
 * lies (test/helpers/verify-lies.ts) alter balances, nonces, code, storage, proofs (values changed
 * without fixing the trie, nodes swapped, a node flipped), block fields, transactions, receipts, logs and
 * eth_call results:
 *   - `proven` (verify: proofs; pools lying, honest, second): no altered value reaches the client — the
 *     honest answer does, with `X-Switchyard-Verified`, and the liar is counted in
 *     switchyard_verify_failures_total;
 *   - `open` (verify off; pools lying-open, honest-open): the lie passes, and no header is sent;
 *   - `strict` (proofs; pools lying-strict, honest-strict; max_attempts 1): a lie means -32050;
 *   - `alone` (proofs, one pool): no quorum of pools, no anchor: -32050, never one origin's word.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Hex } from 'viem';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, waitFor } from '../helpers/devnet-chain.js';
import { assemble, deployment } from '../helpers/evm-program.js';
import { type HttpResult, post } from '../helpers/http.js';
import { type Lie, type LyingOrigin, startLyingOrigin } from '../helpers/lying-origin.js';
import { type ContractChain, HIGH_SLOT, receipt, sender, startContractChain } from '../helpers/proof-chain.js';
import { GATEWAY_LIES, slotLie } from '../helpers/verify-lies.js';
import { WsRpcClient } from '../helpers/ws-client.js';

const TOPIC = `0x${'ab'.repeat(32)}`;
const EMITTER = assemble([
  ...['PUSH1', 42, 'PUSH1', 0, 'MSTORE', 'PUSH32', TOPIC, 'PUSH1', 32, 'PUSH1', 0, 'LOG1', 'STOP'],
]);

let chain: ContractChain;
let liar: LyingOrigin;
let second: LyingOrigin;
let app: TestApp;
let emitter: Hex;
let logTx: Hex;
let logBlock: Record<string, unknown>;

interface Answer {
  result?: unknown;
  error?: { code: number; message: string };
}

async function ask(network: string, method: string, params: unknown[]): Promise<{ res: HttpResult; answer: Answer }> {
  const res = await post(app.rpcUrl(network), JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }));
  return { res, answer: res.json<Answer>() };
}

async function failures(network: string, method: string): Promise<number> {
  const text = await (await fetch(`${new URL(app.apiUrl).origin}/metrics`)).text();
  const prefix = `switchyard_verify_failures_total{network="${network}",origin="liar",method="${method}"} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return Number(line?.slice(prefix.length) ?? 0);
}

/** The liar's verification failures for `method` in both networks that verify with it first. */
async function caught(method: string): Promise<number> {
  return (await failures('proven', method)) + (await failures('strict', method));
}

/**
 * With one attempt (`strict`), a lie is -32050 (with `none`) — unless the plan put the honest origin
 * first (routing may; then its proven answer): never the lie.
 */
function honestOrUnverified(got: { res: HttpResult; answer: Answer }, honest: unknown, what: string): void {
  if (got.answer.error === undefined) {
    assert.deepEqual(got.answer.result, honest, what);
    return;
  }
  assert.equal(got.answer.error.code, -32050, `${what}: ${got.res.text}`);
  assert.equal(got.res.headers['x-switchyard-verified'], 'none');
}

before(async () => {
  chain = await startContractChain();
  const { node } = chain;
  const from = sender(node.url, chain.chainId);
  const fees = { gasPrice: 2_000_000_000n };
  emitter = (await receipt(node.url, await from.send({ data: deployment(EMITTER), ...fees }))).contractAddress as Hex;
  logTx = await from.send({ to: emitter, ...fees });
  const mined = await receipt(node.url, logTx);
  logBlock = await call(node.url, 'eth_getBlockByHash', [mined.blockHash, false]);
  liar = await startLyingOrigin(node.url);
  second = await startLyingOrigin(node.url);
  const network = (pools: string[], extra: Record<string, unknown> = {}) => ({
    chain_id: chain.chainId,
    pools,
    head_poll_interval: '50ms',
    ...extra,
  });
  const origin = (name: string, address: string) => ({ name, origins: [{ name: 'liar', address }] });
  app = await startApp({
    networks: {
      proven: network(['lying', 'honest', 'second'], { verify: 'proofs' }),
      open: network(['lying-open', 'honest-open']),
      strict: network(['lying-strict', 'honest-strict'], {
        verify: 'proofs',
        methods: { 'eth_*': { max_attempts: 1 } },
      }),
      alone: network(['alone'], { verify: 'proofs' }),
      errs: network(['lying-errs', 'second-errs'], { verify: 'proofs' }),
      checked: network(['lying-checked', 'honest-checked'], {
        verify: 'integrity',
        methods: { eth_getBalance: { verify: 'proofs' } },
      }),
    },
    pools: [
      origin('lying', liar.url),
      { name: 'honest', origins: [{ name: 'honest', address: node.url }] },
      { name: 'second', origins: [{ name: 'second', address: second.url }] },
      origin('lying-open', liar.url),
      { name: 'honest-open', origins: [{ name: 'honest', address: node.url }] },
      origin('lying-strict', liar.url),
      { name: 'honest-strict', origins: [{ name: 'honest', address: node.url }] },
      { name: 'alone', origins: [{ name: 'alone', address: node.url }] },
      origin('lying-errs', liar.url),
      { name: 'second-errs', origins: [{ name: 'second', address: second.url }] },
      origin('lying-checked', liar.url),
      { name: 'honest-checked', origins: [{ name: 'honest', address: node.url }] },
    ],
  });
  const head = Number(await call<string>(node.url, 'eth_blockNumber'));
  await waitFor(
    () => ['proven', 'strict', 'checked', 'errs'].every((name) => app.chain.trustedTip(name)?.number === head),
    'the newest block trusted',
  );
});

after(async () => {
  await app?.close();
  await liar?.close();
  await second?.close();
  await chain?.node.stop();
});

/** Each lie, and calls whose answers it alters (the node's answer is the honest one). */
function cases(): [string, string, unknown[]][] {
  const { reader, vault } = chain;
  const owner = sender(chain.node.url, chain.chainId).address;
  const number = logBlock.number as string;
  // By hash: the block before, which no other case asks (a verified block by hash is cached).
  const hash = logBlock.parentHash as string;
  return [
    ['balance', 'eth_getBalance', [vault, 'latest']],
    ['nonce', 'eth_getTransactionCount', [owner, 'latest']],
    ['code', 'eth_getCode', [reader, 'latest']],
    ['storage', 'eth_getStorageAt', [reader, '0x1', 'latest']],
    ['proof nodes swapped', 'eth_getBalance', [vault, 'latest']],
    ['proof node flipped', 'eth_getBalance', [vault, 'latest']],
    ['proof node flipped', 'eth_getProof', [vault, [`0x${'0'.repeat(63)}1`], 'latest']],
    ['block fields', 'eth_getBlockByNumber', [number, false]],
    ['block fields', 'eth_getBlockByHash', [hash, false]],
    ['transactions', 'eth_getBlockByNumber', [number, true]],
    ['receipts', 'eth_getTransactionReceipt', [logTx]],
    ['receipts', 'eth_getBlockReceipts', [number]],
    ['logs', 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: emitter }]],
    ['eth_call result', 'eth_call', [{ to: reader, data: '0x00' }, 'latest']],
  ];
}

describe('verify: proofs against a lying origin', () => {
  it('honest answers pass with the header saying what was proven; bodies are the node’s', async () => {
    liar.lie = undefined;
    for (const [, method, params] of cases()) {
      const honest = await call(chain.node.url, method, params);
      const { res, answer } = await ask('proven', method, params);
      assert.deepEqual(answer.result, honest, method);
      const level = ['eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getTransactionReceipt', 'eth_getBlockReceipts'];
      assert.equal(res.headers['x-switchyard-verified'], level.includes(method) ? 'integrity' : 'proof', method);
    }
  });

  for (const name of Object.keys(GATEWAY_LIES)) {
    it(`a lie about ${name}: with proofs the client gets the honest answer; with verify off the lie passes`, async () => {
      const lie = GATEWAY_LIES[name] as Lie;
      for (const [kind, asked, params] of cases().filter(([kind]) => kind === name)) {
        const honest = await call(chain.node.url, asked, params);
        liar.lie = lie;
        try {
          const told = liar.lies;
          const before = await caught(asked);
          const proven = await ask('proven', asked, params);
          assert.deepEqual(proven.answer.result, honest, `${kind}: ${asked} through proofs`);
          assert.notEqual(proven.res.headers['x-switchyard-verified'], 'none');
          const strict = await ask('strict', asked, params);
          if (asked === 'eth_call') {
            // Executed locally: the origin's own eth_call is never asked, so its lie cannot reach anyone.
            assert.equal(liar.lies, told);
            assert.deepEqual(strict.answer.result, honest);
          } else {
            assert.ok(liar.lies > told, `${kind}: the lie was told (${asked})`);
            assert.ok((await caught(asked)) > before, `${kind}: the liar's failure is counted`);
            honestOrUnverified(strict, honest, `${kind}: ${asked} with one attempt`);
          }
          const open = await ask('open', asked, params);
          assert.notDeepEqual(open.answer.result, honest, `${kind}: with verify off the lie passes (${asked})`);
          assert.equal(open.res.headers['x-switchyard-verified'], undefined);
        } finally {
          liar.lie = undefined;
        }
      }
    });
  }
});

describe('eth_call executed locally over proven state', () => {
  it('reads several slots and calls another contract: the local result is the node’s; a lie in any touched slot is caught', async () => {
    const { reader, vault } = chain;
    const params = [{ to: reader, data: '0x00' }, 'latest'];
    const honest = await call(chain.node.url, 'eth_call', params);
    const touched: [string, bigint | 'balance'][] = [
      [reader, 0n],
      [reader, 1n],
      [reader, 2n],
      [reader, 3n],
      [vault, 0n],
      [vault, 1n],
      [vault, HIGH_SLOT],
      [vault, 'balance'],
    ];
    for (const [address, slot] of touched) {
      liar.lie = slotLie(address, slot);
      try {
        const before = await caught('eth_call');
        honestOrUnverified(await ask('strict', 'eth_call', params), honest, `slot ${slot} of ${address}`);
        const proven = await ask('proven', 'eth_call', params);
        assert.ok((await caught('eth_call')) > before, `slot ${slot} of ${address}: the lie is caught`);
        assert.equal(proven.answer.result, honest);
        assert.equal(proven.res.headers['x-switchyard-verified'], 'proof');
      } finally {
        liar.lie = undefined;
      }
    }
  });

  it('eth_estimateGas computed locally says proof', async () => {
    const { res, answer } = await ask('proven', 'eth_estimateGas', [{ to: chain.reader, data: '0x00' }, 'latest']);
    assert.equal(typeof answer.result, 'string', res.text);
    assert.equal(res.headers['x-switchyard-verified'], 'proof');
  });
});

describe('the trust anchor', () => {
  it('with quorum 2 and one pool there is no anchor: -32050, never one origin’s word', async () => {
    const { res, answer } = await ask('alone', 'eth_getBalance', [chain.vault, 'latest']);
    assert.equal(answer.error?.code, -32050, res.text);
    assert.match(answer.error?.message ?? '', /eth_getBalance/);
    assert.equal(res.headers['x-switchyard-verified'], 'none');
    assert.equal(app.chain.trustedTip('alone'), undefined);
  });
});

describe('X-Switchyard-Verified', () => {
  it('a batch carries the weakest of its answers; a method without a check says none', async () => {
    const batch = async (calls: [string, unknown[]][]) => {
      const body = calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }));
      return post(app.rpcUrl('proven'), JSON.stringify(body));
    };
    const balance: [string, unknown[]] = ['eth_getBalance', [chain.vault, 'latest']];
    const storage: [string, unknown[]] = ['eth_getStorageAt', [chain.reader, '0x2', 'latest']];
    const block: [string, unknown[]] = ['eth_getBlockByNumber', ['0x1', false]];
    assert.equal((await batch([balance, storage])).headers['x-switchyard-verified'], 'proof');
    assert.equal((await batch([balance, block])).headers['x-switchyard-verified'], 'integrity');
    assert.equal((await batch([balance, ['eth_blockNumber', []]])).headers['x-switchyard-verified'], 'none');
    const single = await ask('proven', 'eth_chainId', []);
    assert.equal(single.res.headers['x-switchyard-verified'], 'none');
    const off = await post(
      app.rpcUrl('open'),
      JSON.stringify([{ jsonrpc: '2.0', id: 1, method: balance[0], params: balance[1] }]),
    );
    assert.equal(off.headers['x-switchyard-verified'], undefined);
  });
});

describe('over WebSocket and with the response cache', () => {
  it('a WebSocket call is verified like an HTTP one: the lie never reaches the client', async () => {
    const ws = await WsRpcClient.open(`${app.rpcUrl('proven').replace('http', 'ws')}`);
    try {
      const params = [chain.vault, 'latest'];
      const honest = await call(chain.node.url, 'eth_getBalance', params);
      liar.lie = GATEWAY_LIES.balance;
      const before = await caught('eth_getBalance');
      assert.equal((await ws.ask('eth_getBalance', params)).result, honest);
      assert.ok((await caught('eth_getBalance')) > before, 'the lie was caught');
      const off = await WsRpcClient.open(`${app.rpcUrl('open').replace('http', 'ws')}`);
      try {
        assert.notEqual((await off.ask('eth_getBalance', params)).result, honest, 'with verify off the lie passes');
      } finally {
        off.ws.close();
      }
    } finally {
      liar.lie = undefined;
      ws.ws.close();
    }
  });

  it('a verified answer may be cached and keeps its level; an unverified one is never served as verified', async () => {
    const block = await call<Record<string, unknown>>(chain.node.url, 'eth_getBlockByNumber', ['0x1', false]);
    const first = await ask('proven', 'eth_getBlockByHash', [block.hash, false]);
    liar.lie = GATEWAY_LIES['block fields'];
    try {
      const told = liar.lies;
      const again = await ask('proven', 'eth_getBlockByHash', [block.hash, false]);
      assert.equal(liar.lies, told, 'answered from the cache: no origin asked');
      assert.deepEqual(again.answer.result, block);
      assert.equal(first.res.headers['x-switchyard-verified'], 'integrity');
      assert.equal(again.res.headers['x-switchyard-verified'], 'integrity');
    } finally {
      liar.lie = undefined;
    }
    const tx = (block.transactions as string[])[0];
    for (let i = 0; i < 2; i += 1) {
      const plain = await ask('proven', 'eth_getTransactionByHash', [tx]);
      assert.equal((plain.answer.result as { hash: string }).hash, tx);
      assert.equal(plain.res.headers['x-switchyard-verified'], 'none', 'no check for this method: cached or not');
    }
  });
});

describe('an origin’s own error answer', () => {
  const refuse: Lie = ({ method, params }) =>
    method === 'eth_getBlockByNumber' && /^0x/.test(String(params[0]))
      ? { error: { code: -32000, message: 'not today' } }
      : undefined;

  it('passes through — unless another origin’s answer to the call failed verification: then -32050', async () => {
    const number = logBlock.number as string;
    liar.lie = refuse;
    second.lie = refuse;
    try {
      const own = await ask('errs', 'eth_getBlockByNumber', [number, false]);
      assert.equal(own.answer.error?.message, 'not today', own.res.text);
      assert.equal(own.res.headers['x-switchyard-verified'], 'none');
      liar.lie = GATEWAY_LIES['block fields'];
      const told = liar.lies;
      const after = await ask('errs', 'eth_getBlockByNumber', [number, false]);
      assert.equal(after.res.headers['x-switchyard-verified'], 'none');
      if (liar.lies > told) assert.equal(after.answer.error?.code, -32050, after.res.text);
      // (Routing may put the other origin first: its own error then passes through, nobody lied before it.)
      else assert.equal(after.answer.error?.message, 'not today', after.res.text);
    } finally {
      liar.lie = undefined;
      second.lie = undefined;
    }
  });
});

describe('verify: integrity, and a method’s own verify', () => {
  it('blocks and logs are checked (integrity); state reads are not, except the method set to proofs', async () => {
    const number = logBlock.number as string;
    liar.lie = GATEWAY_LIES['block fields'];
    try {
      const honest = await call(chain.node.url, 'eth_getBlockByNumber', [number, false]);
      const block = await ask('checked', 'eth_getBlockByNumber', [number, false]);
      honestOrUnverified(block, honest, 'a block with integrity');
      if (block.answer.error === undefined) assert.equal(block.res.headers['x-switchyard-verified'], 'integrity');
    } finally {
      liar.lie = undefined;
    }
    const logs = await ask('checked', 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: emitter }]);
    assert.equal(logs.res.headers['x-switchyard-verified'], 'integrity', 'logs: block hashes only');
    liar.lie = GATEWAY_LIES.nonce;
    try {
      const owner = sender(chain.node.url, chain.chainId).address;
      const nonce = await ask('checked', 'eth_getTransactionCount', [owner, 'latest']);
      assert.equal(nonce.res.headers['x-switchyard-verified'], 'none', 'not checked with integrity');
      liar.lie = GATEWAY_LIES.balance;
      const honest = await call(chain.node.url, 'eth_getBalance', [chain.vault, 'latest']);
      const balance = await ask('checked', 'eth_getBalance', [chain.vault, 'latest']);
      assert.equal(balance.answer.result, honest, 'eth_getBalance has verify: proofs of its own');
      assert.equal(balance.res.headers['x-switchyard-verified'], 'proof');
    } finally {
      liar.lie = undefined;
    }
  });
});
