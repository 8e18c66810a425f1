/**
 * The console at scale (SPEC §16) in headless Chromium against a whole Switchyard started in-process: 40
 * pools over 3 networks (sepolia 16 + one name not created yet, mainnet 14, rinkeby 6 — retired with
 * sepolia as its successor) and 4 pools no network uses, whose names sort first. Origins are two real
 * anvil nodes (sepolia's chain, and mainnet's); `sepolia-primary` points at a closed port behind an http
 * monitor, so it turns unhealthy and `sepolia-backup` serves; `mainnet-primary` is disabled. sepolia's
 * `head_stall_after` is 1 s and anvil mines only when told, so real head stalls open (and one ends when
 * the test mines two blocks). A real webhook receiver is the destination "on-call pager" of a head-stall
 * policy; a gateway key "dapp-frontend" makes 7 calls on sepolia and 3 on mainnet.
 *
 * Checked, with a read-only token: networks in the config's order, retired after, unused pools last;
 * past 10 pools every network starts collapsed to a summary and the page stays short; a network
 * expands and collapses by keyboard; its pools in failover order with their roles; the retired network
 * names its date and successor, and its link opens the successor; the filter box by pool, origin and
 * network name; Tab reaches every control; the incidents and keys views by keyboard (Tab + Enter) with
 * the open and ended stalls and the key's usage per day; the webhook by name in policies and history.
 * Screenshots go to test-artefacts/console/ (git-ignored).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchChromium, shot, signIn, tabThrough, tabTo } from '../helpers/console-page.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { rpc } from '../incidents/helpers.js';
import { type Receiver, startReceiver } from '../notifications/helpers.js';

const CLOSED = 'http://127.0.0.1:1';
const DESTINATION = 'on-call pager';
const KEY_NAME = 'dapp-frontend';

const reserves = (network: string, count: number) =>
  // Counting down, so the failover order is the reverse of the alphabetical one.
  Array.from({ length: count }, (_, i) => `${network}-reserve-${String(count - i).padStart(2, '0')}`);
const SEPOLIA = ['sepolia-primary', 'sepolia-backup', ...reserves('sepolia', 14)];
const SEPOLIA_CONFIGURED = [...SEPOLIA.slice(0, 2), 'sepolia-later', ...SEPOLIA.slice(2)];
const MAINNET = ['mainnet-primary', 'mainnet-backup', ...reserves('mainnet', 12)];
const RINKEBY = reserves('rinkeby', 6);
const UNUSED = ['aaa-spare-1', 'aaa-spare-2', 'aaa-spare-3', 'aaa-spare-4'];

function pool(name: string, address: string, extra: Record<string, unknown> = {}) {
  const origin = name === 'sepolia-reserve-07' ? 'archive-node' : `${name}-node`;
  return { name, origins: [{ name: origin, address }], ...extra };
}

describe('operator console at scale in headless Chromium: 40 pools over 3 networks', () => {
  let sepoliaNode: AnvilNode;
  let mainnetNode: AnvilNode;
  let receiver: Receiver;
  let app: TestApp;
  let browser: Browser;
  let base = '';
  let token = '';
  let destinationId = '';

  const api = async <T>(method: string, path: string, body?: unknown, as = token): Promise<T> => {
    const res = await fetch(`${app.apiUrl}/accounts/${app.config.account_id}${path}`, {
      method,
      headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const envelope = (await res.json()) as { success: boolean; result: T; errors: unknown[] };
    assert.ok(envelope.success, `${method} ${path}: ${res.status} ${JSON.stringify(envelope.errors)}`);
    return envelope.result;
  };

  const gatewayCall = async (network: string, key: string) => {
    const res = await fetch(`${app.gatewayUrl}/v1/${network}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${network}: ${text}`);
  };

  before(async () => {
    sepoliaNode = await startTestAnvil({ noMining: true });
    mainnetNode = await startTestAnvil({ chainId: 1, noMining: true });
    receiver = await startReceiver();
    app = await startApp({
      networks: {
        sepolia: {
          chain_id: 11155111,
          pools: SEPOLIA_CONFIGURED,
          head_poll_interval: 0.5,
          incidents: { head_stall_after: 1 },
        },
        mainnet: { chain_id: 1, pools: MAINNET, head_poll_interval: 2 },
        rinkeby: { chain_id: 4, pools: RINKEBY, retired_on: '2023-01-30', replacement: 'sepolia' },
      },
      pools: [
        pool('sepolia-primary', CLOSED, {
          monitor: { type: 'http', interval: 1, timeout: 1, retries: 0, consecutive_down: 1 },
        }),
        ...SEPOLIA.slice(1).map((name) => pool(name, sepoliaNode.url)),
        pool('mainnet-primary', mainnetNode.url, { enabled: false }),
        ...MAINNET.slice(1).map((name) => pool(name, mainnetNode.url)),
        ...RINKEBY.map((name) => pool(name, sepoliaNode.url)),
        ...UNUSED.map((name) => pool(name, sepoliaNode.url)),
      ],
    });
    base = app.apiUrl.replace(/\/client\/v4$/, '');
    token = (await createToken(app.store.db, systemClock, { accountId: app.config.account_id, readOnly: false })).token;
    destinationId = (
      await api<{ id: string }>('POST', '/alerting/v3/destinations/webhooks', { name: DESTINATION, url: receiver.url })
    ).id;
    await api('POST', '/alerting/v3/policies', {
      name: 'stalls to the pager',
      alert_type: 'switchyard_head_stall_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: destinationId }] },
    });
    const key = await api<{ value: string }>('POST', '/gateway/keys', { name: KEY_NAME });
    for (let i = 0; i < 7; i += 1) await gatewayCall('sepolia', key.value);
    for (let i = 0; i < 3; i += 1) await gatewayCall('mainnet', key.value);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
    await sepoliaNode?.stop();
    await mainnetNode?.stop();
  });

  /** A read-only token's page at 1280×800, signed in, on the origins view. */
  async function openConsole(): Promise<Page> {
    const readOnly = await createToken(app.store.db, systemClock, { accountId: app.config.account_id, readOnly: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, base, readOnly.token);
    return page;
  }

  const sectionOrder = (page: Page) =>
    page.locator('.network').evaluateAll((els) => els.map((el) => el.getAttribute('data-network')));
  const toggle = (page: Page, network: string) => page.getByRole('button', { name: `Network ${network}`, exact: true });
  const poolsShown = (page: Page, network: string) =>
    page
      .locator(`.network[data-network="${network}"] table[data-pool]`)
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-pool')));

  test('networks in config order, retired after, unused pools last; collapsed past 10 pools; failover order', async () => {
    // The API's view first: sepolia-primary unhealthy (its monitor), so backup serves.
    await waitFor(
      async () => {
        const networks = await api<Array<{ name: string; pools: Array<{ name: string; healthy: boolean | null }> }>>(
          'GET',
          '/gateway/networks',
        );
        return networks[0]?.pools[0]?.healthy === false;
      },
      'sepolia-primary unhealthy in the API',
      30_000,
    );
    const page = await openConsole();
    await page.getByLabel('Filter pools').waitFor({ timeout: 10_000 });
    assert.deepEqual(await sectionOrder(page), ['sepolia', 'mainnet', 'rinkeby', '']);
    for (const network of ['sepolia', 'mainnet', 'rinkeby']) {
      assert.equal(await toggle(page, network).getAttribute('aria-expanded'), 'false', `${network} starts collapsed`);
    }
    assert.equal(await page.locator('table[data-pool]').count(), 0, 'collapsed: no pool table');
    const sepoliaSummary = page.locator('.network[data-network="sepolia"] .summary');
    await sepoliaSummary.filter({ hasText: 'serving from sepolia-backup' }).waitFor({ timeout: 10_000 });
    assert.match((await sepoliaSummary.textContent()) ?? '', /16 pools/);
    assert.match(
      (await page.locator('.network[data-network=""] h3').textContent()) ?? '',
      /Pools no network uses/,
      'the unused pools are the last section',
    );
    const height = await page.evaluate<number>('document.documentElement.scrollHeight');
    assert.ok(height <= 1200, `40 collapsed pools fit in ${height} px`);
    await shot(page, 'scale-collapsed');

    // Expand sepolia by keyboard: its pools in failover order, with their roles.
    await toggle(page, 'sepolia').focus();
    await page.keyboard.press('Enter');
    assert.equal(await toggle(page, 'sepolia').getAttribute('aria-expanded'), 'true');
    assert.deepEqual(await poolsShown(page, 'sepolia'), SEPOLIA_CONFIGURED);
    const roles = await page
      .locator('.network[data-network="sepolia"] [data-role]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-role')));
    assert.deepEqual(roles.slice(0, 4), ['unhealthy', 'serving', 'missing', 'standby']);
    assert.ok(
      roles.slice(3).every((role) => role === 'standby'),
      roles.join(),
    );
    const positions = await page
      .locator('.network[data-network="sepolia"] .position')
      .evaluateAll((els) => els.map((el) => el.textContent));
    assert.deepEqual(
      positions,
      SEPOLIA_CONFIGURED.map((_, i) => `${i + 1}.`),
    );
    await shot(page, 'scale-sepolia-expanded', false);
    await page.keyboard.press('Enter');
    assert.equal(await toggle(page, 'sepolia').getAttribute('aria-expanded'), 'false', 'collapsed again');
    assert.deepEqual(await poolsShown(page, 'sepolia'), []);

    await toggle(page, 'mainnet').click();
    assert.deepEqual(await poolsShown(page, 'mainnet'), MAINNET);
    assert.equal(
      await page.locator('table[data-pool="mainnet-primary"] [data-role]').getAttribute('data-role'),
      'disabled',
    );
    await page.getByRole('button', { name: 'Pools no network uses' }).click();
    assert.deepEqual(await poolsShown(page, ''), UNUSED);
    await page.close();
  });

  test('the retired network names its date and successor; the link opens the successor', async () => {
    const page = await openConsole();
    const rinkeby = page.locator('.network[data-network="rinkeby"]');
    await rinkeby.locator('.lifecycle').waitFor({ timeout: 10_000 });
    const text = (await rinkeby.locator('.lifecycle').textContent()) ?? '';
    assert.match(text, /retired/);
    assert.match(text, /2023-01-30/);
    assert.match(text, /Successor: sepolia/);
    assert.equal(await toggle(page, 'sepolia').getAttribute('aria-expanded'), 'false');
    await rinkeby.getByRole('link', { name: 'sepolia' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('.network[data-network="sepolia"] table[data-pool]').first().waitFor({ timeout: 5_000 });
    assert.equal(await toggle(page, 'sepolia').getAttribute('aria-expanded'), 'true', 'the successor opened');
    assert.match(page.url(), /#network-sepolia$/);
    await toggle(page, 'rinkeby').click();
    assert.deepEqual(await poolsShown(page, 'rinkeby'), RINKEBY);
    const rinkebyRoles = await rinkeby
      .locator('[data-role]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-role')));
    assert.ok(!rinkebyRoles.includes('serving'), 'nothing serves a retired network');
    await shot(page, 'scale-retired', false);
    await page.close();
  });

  test('the filter box keeps pools matching by pool, origin or network name; Tab reaches every control', async () => {
    const page = await openConsole();
    const filter = page.getByLabel('Filter pools');
    await filter.waitFor({ timeout: 10_000 });
    await filter.fill('reserve-03');
    assert.deepEqual(await sectionOrder(page), ['sepolia', 'mainnet', 'rinkeby']);
    assert.deepEqual(await page.locator('table[data-pool]').evaluateAll((els) => els.map((el) => el.dataset.pool)), [
      'sepolia-reserve-03',
      'mainnet-reserve-03',
      'rinkeby-reserve-03',
    ]);
    assert.match((await page.locator('.filter [aria-live]').textContent()) ?? '', /3 of 40 pools match/);
    assert.match(
      (await page.locator('.network[data-network="sepolia"] .summary').textContent()) ?? '',
      /16 pools .* serving from sepolia-backup/,
      'the summary is of the whole network',
    );
    await shot(page, 'scale-filter', false);
    await filter.fill('ARCHIVE');
    assert.deepEqual(
      await page.locator('table[data-pool]').evaluateAll((els) => els.map((el) => el.dataset.pool)),
      ['sepolia-reserve-07'],
      'by origin name, any case',
    );
    await filter.fill('rinkeby');
    assert.deepEqual(await poolsShown(page, 'rinkeby'), RINKEBY, 'by network name: all its pools');
    assert.deepEqual(await sectionOrder(page), ['rinkeby']);
    await filter.fill('nothing-like-this');
    await page.getByText('No pool, origin or network matches').waitFor();
    await filter.fill('');
    assert.deepEqual(await sectionOrder(page), ['sepolia', 'mainnet', 'rinkeby', '']);
    assert.equal(await page.locator('table[data-pool]').count(), 0, 'collapsed again without a filter');

    await toggle(page, 'sepolia').click();
    const keyboard = await tabThrough(page);
    assert.deepEqual([...keyboard.reached].sort(), [...keyboard.all].sort(), 'Tab reaches every control');
    assert.ok(keyboard.all.some((label) => label.includes('pool-filter')));
    assert.ok(keyboard.all.some((label) => label.includes('Network mainnet')));
    await page.close();
  });

  test('incidents view by keyboard: the open head stall and the one that ended, pools by name', async () => {
    // Real stalls: anvil mines only when told. Wait for one, end it with two blocks, and a new one opens.
    const incidents = (status: string) => api<Array<{ id: string }>>('GET', `/gateway/incidents?status=${status}`);
    await waitFor(async () => (await incidents('open')).length > 0, 'a head stall opens', 30_000);
    await rpc(sepoliaNode, 'evm_mine');
    await rpc(sepoliaNode, 'evm_mine');
    await waitFor(async () => (await incidents('closed')).length > 0, 'the stall ends', 30_000);
    await waitFor(async () => (await incidents('open')).length > 0, 'a new stall opens', 30_000);

    const page = await openConsole();
    await tabTo(page, 'Incidents');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Chain incidents' }).waitFor({ timeout: 5_000 });
    const open = page.getByRole('table', { name: 'Open incidents' });
    await open.waitFor({ timeout: 10_000 });
    const openRow = open.locator('tr[data-incident="head_stall"]').first();
    assert.match((await openRow.textContent()) ?? '', /Head stall.*sepolia.*has not advanced/s);
    await openRow.getByText('16 pools').click();
    assert.match((await openRow.textContent()) ?? '', /sepolia-backup, sepolia-primary/, 'pools by name');
    assert.doesNotMatch((await openRow.textContent()) ?? '', /[0-9a-f]{32}/, 'no pool id');
    const recent = page.getByRole('table', { name: 'Recent incidents' });
    await recent.waitFor({ timeout: 10_000 });
    assert.match((await recent.locator('tr[data-incident="head_stall"]').first().textContent()) ?? '', /\(block \d+\)/);
    await shot(page, 'scale-incidents');
    await page.close();
  });

  test('keys view by keyboard: the key and its usage per day', async () => {
    const page = await openConsole();
    await tabTo(page, 'Keys');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Gateway keys' }).waitFor({ timeout: 5_000 });
    await page.locator(`tr[data-key="${KEY_NAME}"]`).waitFor({ timeout: 10_000 });
    // Every row a day (UTC) with calls; all of them were made today, unless a midnight fell in between.
    const usage = page.locator('table[data-usage-of] tbody tr');
    const total = async () =>
      (await usage.locator('[data-requests]').evaluateAll((els) => els.map((el) => el.getAttribute('data-requests'))))
        .map(Number)
        .reduce((a, b) => a + b, 0);
    await waitFor(async () => (await total()) === 10, 'usage of 10 calls in the console', 10_000);
    const lines = (await usage.allTextContents()).join('\n');
    if ((await usage.count()) === 1) assert.match(lines, /mainnet 3 · sepolia 7|sepolia 7 · mainnet 3/);
    assert.equal(await page.getByLabel('Key', { exact: true }).inputValue(), (await keyId()) ?? '');
    await shot(page, 'scale-keys');
    await page.close();
  });

  const keyId = async () => (await api<Array<{ id: string; name: string }>>('GET', '/gateway/keys'))[0]?.id;

  test('webhook destinations by name in policies and in history, never by id', async () => {
    await waitFor(
      async () =>
        (await api<Array<{ mechanism: string }>>('GET', '/alerting/v3/history')).some(
          (h) => h.mechanism === destinationId,
        ),
      'a stall alert sent to the pager',
      30_000,
    );
    const page = await openConsole();
    await page.getByRole('button', { name: 'Policies' }).click();
    const to = page.locator('li[data-policy="stalls to the pager"] .to');
    await to.filter({ hasText: `webhook ${DESTINATION}` }).waitFor({ timeout: 10_000 });
    assert.doesNotMatch((await to.textContent()) ?? '', new RegExp(destinationId));
    await page.getByRole('button', { name: 'Deliveries' }).click();
    const history = page.locator('table[aria-labelledby="history-title"]');
    await history
      .locator('td', { hasText: `webhook ${DESTINATION}` })
      .first()
      .waitFor({ timeout: 10_000 });
    assert.doesNotMatch((await history.textContent()) ?? '', new RegExp(destinationId));
    await shot(page, 'scale-history');
    await page.close();
  });
});
