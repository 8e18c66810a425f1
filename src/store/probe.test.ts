import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { openStore } from './database.js';
import { StoreProbe } from './probe.js';
import type { Database } from './schema.js';

describe('StoreProbe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-probe-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is ready while the store answers, and not once it is closed', async () => {
    const store = await openStore({ data_dir: dir });
    const probe = new StoreProbe(store, { maxAgeMs: 0 });
    assert.equal(await probe.storeReady(), true);
    await store.close();
    assert.equal(await probe.storeReady(), false);
  });

  it('shares one query among callers and reuses a recent answer', async () => {
    const store = await openStore({ data_dir: dir });
    const probe = new StoreProbe(store, { maxAgeMs: 60_000 });
    const [a, b] = [probe.storeReady(), probe.storeReady()];
    assert.ok(a instanceof Promise);
    assert.equal(a, b);
    assert.equal(await a, true);
    await store.close();
    // Within maxAgeMs the last answer stands, synchronously.
    assert.equal(probe.storeReady(), true);
  });

  it('is not ready when the store does not answer in time (a PostgreSQL address that never answers)', async () => {
    // A TCP server that accepts and stays silent: the client waits for the server's greeting forever.
    // On a loaded machine the client's connection may be accepted only after the probe gave up: once the
    // test ends, late connections are cut at once, and the pool's own connect bound ends a stuck one.
    const sockets = new Set<Socket>();
    let ending = false;
    const silent = createServer((socket) => (ending ? socket.destroy() : sockets.add(socket)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const pool = new pg.Pool({
      connectionString: `postgres://probe@127.0.0.1:${port}/probe`,
      max: 1,
      connectionTimeoutMillis: 2_000,
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      const probe = new StoreProbe(
        { db, dialect: 'postgres', close: () => db.destroy() },
        { timeoutMs: 50, maxAgeMs: 0 },
      );
      assert.equal(await probe.storeReady(), false);
    } finally {
      ending = true;
      for (const socket of sockets) socket.destroy();
      await db.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
