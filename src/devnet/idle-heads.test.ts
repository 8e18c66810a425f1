import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OFFLINE_DEFAULT_CONFIG } from '../config/defaults.js';
import { buildConfig } from '../config/load.js';
import { devnetOnDemandHeads } from './idle-heads.js';

test('the offline defaults mine on demand: their devnet network is judged for no stall', () => {
  const config = buildConfig({ ...OFFLINE_DEFAULT_CONFIG, data_dir: '/tmp/unused' }, '(test)');
  assert.deepEqual(devnetOnDemandHeads(config), ['sepolia']);
});

test('a devnet with a block time moves by itself, and no devnet means no exemption', () => {
  const timed = buildConfig(
    { ...OFFLINE_DEFAULT_CONFIG, devnet: { ...OFFLINE_DEFAULT_CONFIG.devnet, block_time: 2 } },
    '(test)',
  );
  assert.deepEqual(devnetOnDemandHeads(timed), []);
  const none = buildConfig({ networks: { sepolia: { chain_id: 11155111, pools: [] } } }, '(test)');
  assert.deepEqual(devnetOnDemandHeads(none), []);
});
