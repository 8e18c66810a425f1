/**
 * The transactions API (SPEC §19, our extension): records of sends through the gateway to a real anvil
 * node (mining only when told), listed with the filters `network`, `status`, `key_id`, `from`, `since`,
 * paginated exactly like pools (page/per_page and limit/offset, result_info), newest first; one record by
 * hash with its history; read-only tokens read; another account gets 403 whatever it asks; bad filters
 * are 400 / 1002 naming them. Runs on both store backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TransactionRecord } from '../../src/ledger/types.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf } from '../helpers/app.js';
import { ALICE, BOB, rpc, sendThroughGateway, signTransfer, waitForStatus } from '../ledger/helpers.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

type Tx = TransactionRecord;

const FIELDS = [
  'block_hash',
  'block_number',
  'first_seen',
  'from',
  'hash',
  'history',
  'key_id',
  'network',
  'nonce',
  'replaced_by',
  'status',
  'transaction_index',
  'updated_at',
].sort();

describe('transactions API', () => {
  let f: ApiFixture;
  let node: AnvilNode;
  let base: string;
  let keyId: string;
  /** Hashes in the order sent: 0–2 by ALICE with the key (then mined), 3–4 by BOB without one. */
  const sent: string[] = [];
  let middle = '';

  before(async () => {
    node = await startTestAnvil({ noMining: true });
    f = await startApiFixture({
      networks: {
        sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: 0.05 },
        holesky: { chain_id: 17000, pools: [] },
      },
      pools: [poolOf('p', [node.url])],
    });
    base = `/accounts/${f.accountId}/gateway/transactions`;
    const made = await f.call('POST', `/accounts/${f.accountId}/gateway/keys`, { body: { name: 'dapp' } });
    const key = made.body.result as { id: string; value: string };
    keyId = key.id;
    for (let nonce = 0; nonce < 3; nonce += 1) {
      sent.push(
        await sendThroughGateway(f.app, await signTransfer(ALICE, nonce), { authorization: `Bearer ${key.value}` }),
      );
      await f.app.ledger.settled();
      if (nonce === 1) {
        // Apart in time from the first: `since` can split the list here.
        await new Promise((resolve) => setTimeout(resolve, 20));
        middle = new Date().toISOString();
      }
    }
    await rpc(node.url, 'evm_mine');
    for (const hash of sent) await waitForStatus(f.app, hash, 'included');
    for (let nonce = 0; nonce < 2; nonce += 1) {
      sent.push(await sendThroughGateway(f.app, await signTransfer(BOB, nonce)));
      await f.app.ledger.settled();
    }
  });
  after(async () => {
    await f?.close();
    await node?.stop();
  });

  it('lists every record newest first, in the record shape, with result_info', async () => {
    const { status, body } = await f.call('GET', base);
    assert.equal(status, 200);
    const list = body.result as Tx[];
    assert.deepEqual(
      list.map((tx) => tx.hash),
      [...sent].reverse(),
    );
    assert.deepEqual(body.result_info, { page: 1, per_page: 25, count: 5, total_count: 5, total_pages: 1 });
    for (const tx of list) assert.deepEqual(Object.keys(tx).sort(), FIELDS);
    const mined = list.find((tx) => tx.hash === sent[0]) as Tx;
    assert.equal(mined.status, 'included');
    assert.equal(mined.key_id, keyId);
    assert.equal(mined.from, ALICE.address.toLowerCase());
    assert.equal(mined.block_number, 1);
    const fresh = list.find((tx) => tx.hash === sent[3]) as Tx;
    assert.deepEqual(
      { status: fresh.status, key_id: fresh.key_id, block_number: fresh.block_number, replaced_by: fresh.replaced_by },
      { status: 'pending', key_id: null, block_number: null, replaced_by: null },
    );
  });

  it('filters by network, status, key_id, from and since', async () => {
    const hashes = async (query: string) =>
      ((await f.call('GET', `${base}?${query}`)).body.result as Tx[]).map((tx) => tx.hash);
    assert.deepEqual(await hashes('status=included'), sent.slice(0, 3).reverse());
    assert.deepEqual(await hashes('status=pending'), sent.slice(3).reverse());
    assert.deepEqual(await hashes('status=final'), []);
    assert.deepEqual(await hashes(`key_id=${keyId}`), sent.slice(0, 3).reverse());
    assert.deepEqual(await hashes(`from=${BOB.address}`), sent.slice(3).reverse());
    assert.deepEqual(await hashes(`from=${BOB.address.toLowerCase()}&status=included`), []);
    assert.deepEqual(await hashes('network=sepolia'), [...sent].reverse());
    assert.deepEqual(await hashes('network=holesky'), []);
    assert.deepEqual(await hashes(`since=${middle}`), sent.slice(2).reverse());
    const counted = await f.call('GET', `${base}?status=pending&per_page=1`);
    assert.deepEqual(counted.body.result_info, { page: 1, per_page: 1, count: 1, total_count: 2, total_pages: 2 });
  });

  it('pages exactly like pools: page/per_page, limit/offset, [] past the end, mixing refused', async () => {
    const page2 = await f.call('GET', `${base}?page=2&per_page=2`);
    assert.deepEqual(
      (page2.body.result as Tx[]).map((tx) => tx.hash),
      [sent[2], sent[1]],
    );
    assert.deepEqual(page2.body.result_info, { page: 2, per_page: 2, count: 2, total_count: 5, total_pages: 3 });
    const offset = await f.call('GET', `${base}?limit=2&offset=4`);
    assert.deepEqual(
      (offset.body.result as Tx[]).map((tx) => tx.hash),
      [sent[0]],
    );
    assert.deepEqual(offset.body.result_info, { page: 3, per_page: 2, count: 1, total_count: 5, total_pages: 3 });
    const past = await f.call('GET', `${base}?page=9`);
    assert.deepEqual(past.body.result, []);
    const mixed = await f.call('GET', `${base}?page=1&limit=2`);
    assert.equal(mixed.status, 400);
    assert.equal(mixed.body.errors[0]?.code, 1002);
  });

  it('one record by hash (any case) with its history; an unknown or malformed hash is 404', async () => {
    const hash = sent[0] as string;
    const { status, body } = await f.call('GET', `${base}/${hash.toUpperCase().replace('0X', '0x')}`);
    assert.equal(status, 200);
    const tx = body.result as Tx;
    assert.equal(tx.hash, hash);
    assert.deepEqual(
      tx.history.map((entry) => [entry.status, entry.block_number]),
      [
        ['pending', undefined],
        ['included', 1],
      ],
    );
    assert.equal(tx.history[1]?.block_hash, tx.block_hash);
    const unknown = await f.call('GET', `${base}/0x${'ab'.repeat(32)}`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errors[0]?.code, 7003);
    const malformed = await f.call('GET', `${base}/nothash`);
    assert.equal(malformed.status, 404);
  });

  it('a read-only token reads; another account gets 403 and learns nothing', async () => {
    const read = await f.call('GET', base, { token: f.readToken });
    assert.equal(read.status, 200);
    assert.equal((read.body.result as Tx[]).length, 5);
    const one = await f.call('GET', `${base}/${sent[0]}`, { token: f.readToken });
    assert.equal(one.status, 200);
    for (const path of [base, `${base}/${sent[0]}`, `${base}/0x${'ab'.repeat(32)}`]) {
      const theirs = await f.call('GET', path, { token: f.otherToken });
      assert.equal(theirs.status, 403, path);
      assert.equal(theirs.body.errors[0]?.code, 10000);
    }
    // Its own path: it sends nothing through the gateway, so it has no transactions: 403 as well.
    const own = await f.call('GET', `/accounts/${OTHER_ACCOUNT}/gateway/transactions/${sent[0]}`, {
      token: f.otherToken,
    });
    assert.equal(own.status, 403);
    assert.equal(JSON.stringify(own.body).includes(sent[0] as string), false);
  });

  it('refuses unknown filters and values with 400 / 1002 naming them', async () => {
    const cases: Array<[string, string]> = [
      ['status=reorged', 'status'],
      ['status=bogus', 'status'],
      ['network=mainnet', 'network'],
      ['key_id=XYZ', 'key_id'],
      ['from=0x123', 'from'],
      ['since=yesterday', 'since'],
      ['since=2026-01-01', 'since'],
      ['color=red', 'color'],
      ['status=pending&status=included', 'status'],
    ];
    for (const [query, named] of cases) {
      const { status, body } = await f.call('GET', `${base}?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.errors[0]?.code, 1002, query);
      assert.match(body.errors[0]?.message ?? '', new RegExp(named), query);
    }
  });
});
