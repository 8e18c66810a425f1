/**
 * Driving the operator console in headless Chromium (Debian's /usr/bin/chromium through playwright-core,
 * no browser download): launch, sign in, walk every control with Tab, screenshots into
 * test-artefacts/console/ (git-ignored; docs/console.md's pictures are copied from there).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO_ROOT } from './cli.js';

export const ARTEFACTS = join(REPO_ROOT, 'test-artefacts', 'console');

export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTEFACTS, { recursive: true });
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}

export async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage });
}

/** Opens `${base}/` (the API listener's root), signs in with `token` and waits for the signed-in header. */
export async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
}

/** Presses Tab until focus comes back around; returns the labels of every control focused on the way. */
export async function tabThrough(page: Page): Promise<{ reached: Set<string>; all: string[] }> {
  // (A string: it runs in the page, where the DOM is; this file is type-checked for Node.)
  const all = await page.evaluate<string[]>(`[...document.querySelectorAll('button, input, select, summary, a[href]')]
    .filter((el) => !el.disabled && el.offsetParent !== null)
    .map((el, i) => {
      el.dataset.tabProbe = String(i);
      return i + ':' + (el.getAttribute('aria-label') ?? el.id ?? '') + (el.textContent?.trim() ?? '');
    })`);
  const reached = new Set<string>();
  await page.evaluate('document.activeElement?.blur()');
  for (let i = 0; i < all.length + 5; i += 1) {
    await page.keyboard.press('Tab');
    const probe = await page.evaluate<string>("document.activeElement?.dataset?.tabProbe ?? ''");
    if (probe !== '') reached.add(all[Number(probe)] as string);
  }
  return { reached, all };
}

/** Presses Tab (at most `limit` times) until the focused element's text is `text`; throws when it never is. */
export async function tabTo(page: Page, text: string, limit = 60): Promise<void> {
  await page.evaluate('document.activeElement?.blur()');
  for (let i = 0; i < limit; i += 1) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''")) === text) return;
  }
  throw new Error(`Tab never reached "${text}" in ${limit} presses`);
}
