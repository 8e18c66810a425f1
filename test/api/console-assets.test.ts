// The console's files on the API listener (api/console-assets.ts): redirects, the strict CSP on every
// answer, gzip when accepted, 404 for an unknown file, and `api.console: false` turning all of it off.
// Needs the built console (`npm run build`: dist/console/).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONSOLE_CSP } from '../../src/api/console-assets.js';
import { startApp, type TestApp } from '../helpers/app.js';

const origin = (app: TestApp) => app.apiUrl.replace(/\/client\/v4$/, '');

describe('console assets', () => {
  let on: TestApp;
  let off: TestApp;
  before(async () => {
    on = await startApp({ devnet: { enabled: false } });
    off = await startApp({ devnet: { enabled: false }, api: { console: false } });
  });
  after(async () => {
    await on?.close();
    await off?.close();
  });

  test('GET / → 302 /console/, /console → 301 /console/, the page with the CSP, gzip when accepted', async () => {
    const root = await fetch(`${origin(on)}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/console/');
    const bare = await fetch(`${origin(on)}/console`, { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), '/console/');
    const page = await fetch(`${origin(on)}/console/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(page.headers.get('content-security-policy'), CONSOLE_CSP);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.match(await page.text(), /<script type="module" src="app.js"><\/script>/);
    const script = await fetch(`${origin(on)}/console/app.js`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(script.headers.get('content-encoding'), 'gzip');
    assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
    await script.arrayBuffer();
    const missing = await fetch(`${origin(on)}/console/nothing.js`);
    assert.equal(missing.status, 404);
    await missing.text();
    // The API itself is unchanged beside it.
    assert.equal((await fetch(`${on.apiUrl}/accounts`)).status, 401);
  });

  test('api.console: false → / and /console/ are 404', async () => {
    for (const path of ['/', '/console/', '/console/app.js']) {
      const res = await fetch(`${origin(off)}${path}`, { redirect: 'manual' });
      assert.equal(res.status, 404, path);
      await res.text();
    }
  });
});
