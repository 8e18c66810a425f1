import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectionBudget, MIN_CONNECTIONS, openFilesLimit } from './fd-budget.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max stack size            8388608              unlimited            bytes
Max open files            300                  4096                 files
Max locked memory         8388608              8388608              bytes
`;

describe('the gateway listener within the file-descriptor limit', () => {
  it('reads the soft open-files limit from a /proc/self/limits file; unknown when missing or unlimited', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fd-budget-'));
    try {
      writeFileSync(join(dir, 'limits'), LIMITS);
      assert.equal(openFilesLimit(join(dir, 'limits')), 300);
      writeFileSync(join(dir, 'unlimited'), LIMITS.replace('300    ', 'unlimited'));
      assert.equal(openFilesLimit(join(dir, 'unlimited')), undefined);
      assert.equal(openFilesLimit(join(dir, 'missing')), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps max(64, 10 %) plus the origin connections in reserve, lowering max_connections when needed', () => {
    assert.deepEqual(connectionBudget({ configured: 10_000, fdLimit: 1_048_576, originConnections: 128 }), {
      maxConnections: 10_000,
      reserve: 104_858 + 128,
      lowered: false,
    });
    assert.deepEqual(connectionBudget({ configured: 10_000, fdLimit: 300, originConnections: 64 }), {
      maxConnections: 300 - 128,
      reserve: 128,
      lowered: true,
    });
    assert.deepEqual(connectionBudget({ configured: 10_000, fdLimit: 11_000, originConnections: 640 }), {
      maxConnections: 11_000 - 1_740,
      reserve: 1_740,
      lowered: true,
    });
  });

  it('never goes below MIN_CONNECTIONS, nor above the configured value; an unknown limit changes nothing', () => {
    assert.equal(
      connectionBudget({ configured: 10_000, fdLimit: 100, originConnections: 640 }).maxConnections,
      MIN_CONNECTIONS,
    );
    assert.equal(connectionBudget({ configured: 8, fdLimit: 100, originConnections: 640 }).maxConnections, 8);
    assert.deepEqual(connectionBudget({ configured: 10_000, fdLimit: undefined, originConnections: 640 }), {
      maxConnections: 10_000,
      reserve: 0,
      lowered: false,
    });
  });
});
