/**
 * The operator console in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core)
 * against a real `switchyard serve` on the offline devnet (two real anvil nodes, the demo email alert):
 *   - the console's files: `/` → 302 `/console/`, text/html with a strict CSP, ≤ 250 KiB transferred;
 *   - a wrong token gets a clear message; signing in with a read-write token shows both origins Healthy;
 *   - keyboard: Tab reaches every control of the sign-in form and of the origins view;
 *   - a transaction sent through the gateway shows in the Transactions view with its status, its history
 *     opens and its status filter works from the keyboard (SPEC §19);
 *   - one anvil killed by PID → once the API reports it Unhealthy, the console shows it Unhealthy with
 *     its reason within the 5 s refresh, and the event shows in the timeline and the alert in history;
 *   - a revoked token mid-session returns to sign-in with a message; sign-out forgets the token.
 * Screenshots go to test-artefacts/console/ (git-ignored), for a human to look at.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { CONSOLE_CSP } from '../../src/api/console-assets.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { isPidAlive, waitForPidsGone } from '../helpers/anvil.js';
import { type CliProcess, runCli } from '../helpers/cli.js';
import { launchChromium, shot, signIn as signInAt, tabThrough } from '../helpers/console-page.js';
import { spawnDevnetServe } from '../helpers/serve.js';
import { ALICE, signTransfer } from '../ledger/helpers.js';

const ACCOUNT = DEFAULTS.account_id;
const MAX_TRANSFER = 250 * 1024;
const REFRESH_BOUND_MS = 5_000;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-console-'));
const configPath = join(dir, 'serve.yaml');
let proc: CliProcess | undefined;
let anvils: number[] = [];
let browser: Browser | undefined;
let base = '';
let api = '';
let gateway = '';

async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${proc?.stderr() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function makeToken(readOnly: boolean): Promise<string> {
  const run = await runCli([
    'token',
    'create',
    '--account',
    ACCOUNT,
    ...(readOnly ? ['--read-only'] : []),
    '--config',
    configPath,
  ]);
  assert.equal(run.code, 0, run.stderr);
  return run.stdout.trim();
}

async function apiGet<T>(token: string, path: string): Promise<T> {
  const res = await fetch(`${api}/accounts/${ACCOUNT}${path}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { result: T }).result;
}

function signIn(page: Page, token: string): Promise<void> {
  return signInAt(page, base, token);
}

describe('operator console in headless Chromium against serve on the devnet', () => {
  let writeToken = '';

  before(async () => {
    const serve = await spawnDevnetServe(configPath, join(dir, 'data'));
    proc = serve.proc;
    anvils = serve.anvils;
    api = serve.api;
    gateway = serve.gateway;
    base = serve.api.replace(/\/client\/v4$/, '');
    writeToken = await makeToken(false);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    if (proc !== undefined) {
      proc.kill('SIGTERM');
      await proc.waitForExit(30_000).catch(() => proc?.kill('SIGKILL'));
    }
    await waitForPidsGone(anvils, 10_000);
    for (const pid of anvils) if (isPidAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('/ redirects to /console/: HTML with a strict CSP, assets ≤ 250 KiB transferred (gzip)', async () => {
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/console/');
    const page = await fetch(`${base}/console/`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.equal(csp, CONSOLE_CSP);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const html = await page.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    // What the browser downloads: the page and every file it links, measured as sent (gzip).
    const files = ['', ...[...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)];
    let transferred = 0;
    for (const file of files) {
      const res = await fetch(`${base}/console/${file}`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.status, 200, file);
      assert.equal(res.headers.get('content-security-policy'), CONSOLE_CSP);
      // fetch() inflates; read the raw size the server sent from a second, raw request.
      const raw = await import('node:http').then(
        (http) =>
          new Promise<Buffer>((resolve, reject) => {
            http
              .get(`${base}/console/${file}`, { headers: { 'accept-encoding': 'gzip' } }, (reply) => {
                const chunks: Buffer[] = [];
                reply.on('data', (chunk: Buffer) => chunks.push(chunk));
                reply.on('end', () => resolve(Buffer.concat(chunks)));
              })
              .on('error', reject);
          }),
      );
      assert.ok(gunzipSync(raw).length > 0);
      transferred += raw.length;
      await res.arrayBuffer();
    }
    assert.ok(files.length >= 3, `page, script and stylesheet: ${files.join(', ')}`);
    assert.ok(transferred <= MAX_TRANSFER, `transferred ${transferred} bytes > ${MAX_TRANSFER}`);
  });

  test('a wrong token gets a clear message; Tab reaches every sign-in control', async () => {
    const page = await (browser as Browser).newPage();
    await page.goto(`${base}/console/`);
    const keyboard = await tabThrough(page);
    assert.deepEqual([...keyboard.reached].sort(), [...keyboard.all].sort());
    await page.getByLabel('API token').fill('not-a-real-token-0000000000000000000000');
    await page.keyboard.press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 10_000 });
    assert.match((await alert.textContent()) ?? '', /This API token was not accepted/);
    assert.equal(await page.evaluate<number>('sessionStorage.length'), 0, 'a refused token is not kept');
    assert.doesNotMatch(page.url(), /token/);
    await shot(page, 'wrong-token');
    await page.close();
  });

  test('the Transactions view lists a send through the gateway with its status and history, by keyboard', async () => {
    const raw = await signTransfer(ALICE, 0);
    const sent = await fetch(`${gateway}/v1/sepolia`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
    });
    const hash = ((await sent.json()) as { result: string }).result;
    // The devnet mines each transaction: the ledger has it included soon.
    await waitFor('the send included in the API', 30_000, async () => {
      const list = await apiGet<Array<{ hash: string; status: string }>>(writeToken, '/gateway/transactions');
      return list.find((tx) => tx.hash === hash)?.status === 'included' ? true : undefined;
    });
    const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, writeToken);
    await page.getByRole('button', { name: 'Transactions' }).click();
    const row = page.locator(`tr[data-tx="${hash}"]`);
    await row.locator('[data-status="included"]').waitFor({ timeout: REFRESH_BOUND_MS });
    const keyboard = await tabThrough(page);
    assert.deepEqual([...keyboard.reached].sort(), [...keyboard.all].sort(), 'Tab reaches every control');
    // The history opens from the keyboard.
    await page.getByLabel(`History of ${hash}`).focus();
    await page.keyboard.press('Enter');
    const history = row.locator('.history li');
    await history.nth(1).waitFor();
    assert.deepEqual(
      (await history.allTextContents()).map((text) =>
        text.replace(/^.*\d\d:\d\d:\d\d /, '').replace(/ in block.*/, ''),
      ),
      ['pending', 'included'],
    );
    await shot(page, 'transactions');
    // Filtered by status from the keyboard: the included send leaves a "pending" list and comes back.
    await page.getByLabel('Status').focus();
    await page.getByLabel('Status').selectOption('pending');
    await row.waitFor({ state: 'detached', timeout: REFRESH_BOUND_MS });
    await page.getByLabel('Status').selectOption('included');
    await row.waitFor({ timeout: REFRESH_BOUND_MS });
    await page.close();
  });

  test('sign in, origins Healthy; kill an anvil → Unhealthy with its reason, in the timeline and history', async () => {
    const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, writeToken);
    assert.deepEqual(
      await page.evaluate<string[]>('Object.keys(sessionStorage)'),
      ['switchyard.console.token'],
      'the token is in sessionStorage',
    );
    assert.doesNotMatch(page.url(), new RegExp(writeToken));
    const health = (origin: string) => page.locator(`tr[data-origin="${origin}"] [data-health]`);
    await waitFor('both origins Healthy in the console', 60_000, async () =>
      (await health('anvil-0')
        .getAttribute('data-health')
        .catch(() => null)) === 'Healthy' &&
      (await health('anvil-1')
        .getAttribute('data-health')
        .catch(() => null)) === 'Healthy'
        ? true
        : undefined,
    );
    // Traffic through the gateway: the console's requests/s and p50 come from the gateway's counters.
    for (let i = 0; i < 40; i += 1) {
      const res = await fetch(`${gateway}/v1/sepolia`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'eth_getBalance',
          params: [`0x${'2'.repeat(40)}`, 'latest'],
        }),
      });
      assert.equal(res.status, 200);
      await res.text();
    }
    // Flushed to the store within 5 s, shown at the next 4 s refresh.
    await page.locator('tr[data-origin] td[data-p50]:not([data-p50=""])').first().waitFor({ timeout: 15_000 });
    await shot(page, 'origins-healthy');
    // One pool (10 or fewer): everything shown, no filter box, no collapse.
    assert.equal(await page.getByLabel('Filter pools').count(), 0, 'no filter box for one pool');
    assert.equal(await page.locator('button[aria-expanded]').count(), 0, 'no collapse for one pool');

    const keyboard = await tabThrough(page);
    assert.deepEqual([...keyboard.reached].sort(), [...keyboard.all].sort(), 'Tab reaches every control');
    assert.ok(
      keyboard.all.some((label) => label.includes('Disable anvil-0')),
      'write actions for a write token',
    );

    const victim = anvils[0] as number;
    process.kill(victim, 'SIGKILL');
    // The API's verdict first (the monitor's confirmation takes its checks); then the console's refresh.
    await waitFor('anvil-0 Unhealthy in the API', 60_000, async () => {
      const stats = await apiGet<Array<{ origin_name: string; healthy: boolean }>>(
        writeToken,
        '/load_balancers/origin_stats',
      );
      return stats.find((s) => s.origin_name === 'anvil-0')?.healthy === false ? true : undefined;
    });
    const seenAt = Date.now();
    await waitFor('anvil-0 Unhealthy in the console', REFRESH_BOUND_MS + 1_000, async () =>
      (await health('anvil-0').getAttribute('data-health')) === 'Unhealthy' ? true : undefined,
    );
    assert.ok(Date.now() - seenAt <= REFRESH_BOUND_MS, `shown after ${Date.now() - seenAt} ms`);
    const reason = (await page.locator('tr[data-origin="anvil-0"] .reason').first().textContent()) ?? '';
    assert.ok(reason.trim().length > 0, 'a failure reason is shown');
    await shot(page, 'origin-unhealthy');

    await page.getByRole('button', { name: 'Events' }).click();
    await page
      .locator('.timeline li.bad', { hasText: 'Origin anvil-0' })
      .first()
      .waitFor({ timeout: REFRESH_BOUND_MS });
    await shot(page, 'events');

    await page.getByRole('button', { name: 'Deliveries' }).click();
    await waitFor('the alert in history', 60_000, async () =>
      (await page.locator('table[aria-labelledby="history-title"] tr', { hasText: 'operator@localhost' }).count()) > 0
        ? true
        : undefined,
    );
    await shot(page, 'deliveries');

    await page.getByRole('button', { name: 'Charts' }).click();
    await page.getByLabel('Origin', { exact: true }).waitFor({ timeout: REFRESH_BOUND_MS });
    await page.locator('.chart .uplot').first().waitFor({ timeout: REFRESH_BOUND_MS });
    await shot(page, 'charts');
    await page.getByRole('button', { name: 'Migration' }).click();
    await page.locator('#migration-title').waitFor();
    await shot(page, 'migration');
    await page.getByRole('button', { name: 'Policies' }).click();
    await page.locator('.cards li').first().waitFor({ timeout: REFRESH_BOUND_MS });
    await shot(page, 'policies');
    await page.close();
  });

  test('disabling an origin asks for confirmation, then disables and enables it; a read-only token has no write actions', async () => {
    const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, writeToken);
    await page.getByRole('button', { name: 'Disable anvil-1' }).click();
    const confirm = page.getByRole('button', { name: 'Confirm' });
    await confirm.waitFor();
    assert.equal(await page.evaluate<string>('document.activeElement?.textContent'), 'Confirm', 'focus on Confirm');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Disable anvil-1' }).waitFor();
    const pools = await apiGet<Array<{ name: string; origins: Array<{ name: string; enabled: boolean }> }>>(
      writeToken,
      '/load_balancers/pools',
    );
    assert.equal(pools[0]?.origins.find((o) => o.name === 'anvil-1')?.enabled, true, 'cancel changed nothing');
    const enabled = async () =>
      (
        await apiGet<Array<{ origins: Array<{ name: string; enabled: boolean }> }>>(writeToken, '/load_balancers/pools')
      )[0]?.origins.find((o) => o.name === 'anvil-1')?.enabled;
    // Confirmed: the origin is disabled through the API, and the button turns into "Enable".
    await page.getByRole('button', { name: 'Disable anvil-1' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').filter({ hasText: 'anvil-1 disabled' }).waitFor({ timeout: 10_000 });
    assert.equal(await enabled(), false);
    await page.getByRole('button', { name: 'Enable anvil-1' }).click({ timeout: REFRESH_BOUND_MS });
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').filter({ hasText: 'anvil-1 enabled' }).waitFor({ timeout: 10_000 });
    assert.equal(await enabled(), true);
    await page.close();

    const readOnly = await makeToken(true);
    const view = await (browser as Browser).newPage();
    await signIn(view, readOnly);
    await view.locator('tr[data-origin="anvil-1"]').waitFor({ timeout: 10_000 });
    assert.equal(await view.getByRole('button', { name: /Disable|Enable/ }).count(), 0);
    assert.match((await view.locator('header').textContent()) ?? '', /read-only token/);
    await view.close();
  });

  test('a token revoked mid-session returns to sign-in with a message; sign-out forgets the token', async () => {
    const token = await makeToken(true);
    const page = await (browser as Browser).newPage();
    await signIn(page, token);
    const list = await runCli(['token', 'list', '--account', ACCOUNT, '--config', configPath]);
    assert.equal(list.code, 0, list.stderr);
    const verify = await fetch(`${api}/user/tokens/verify`, { headers: { authorization: `Bearer ${token}` } });
    const id = ((await verify.json()) as { result: { id: string } }).result.id;
    const revoked = await runCli(['token', 'revoke', '--account', ACCOUNT, id, '--config', configPath]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: REFRESH_BOUND_MS + 1_000 });
    assert.match((await alert.textContent()) ?? '', /Your session ended/);
    assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
    await shot(page, 'session-ended');

    await signIn(page, writeToken);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
    await page.close();
  });
});
