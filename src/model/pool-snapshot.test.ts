import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poolFromConfig } from '../routing/static-directory.js';
import { PoolSnapshot } from './pool-snapshot.js';

const ROUTING = 'a'.repeat(32);
const TENANT = 'b'.repeat(32);
const NOW = '2026-03-01T00:00:00.000Z';
const pool = (name: string, account: string) =>
  poolFromConfig({ name, origins: [{ name: 'o', address: 'http://127.0.0.1:1' }] }, account, NOW);

test('pools are found by id in every account, by name in the routing account only, and swapped whole', () => {
  const snapshot = new PoolSnapshot({ accountId: ROUTING });
  const mine = pool('p', ROUTING);
  const theirs = pool('q', TENANT);
  snapshot.replace([mine, theirs]);
  assert.equal(snapshot.poolById(mine.id), mine);
  assert.equal(snapshot.poolById(theirs.id), theirs);
  assert.equal(snapshot.poolByName('p'), mine);
  assert.equal(snapshot.poolByName('q'), undefined);
  snapshot.replace([theirs]);
  assert.equal(snapshot.poolById(mine.id), undefined, 'a removed pool is gone from the id index');
  assert.equal(snapshot.poolById('nope'), undefined);
});
