import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe, expect, inject } from 'vitest';
import type { Role } from '../../src/db/types.js';
import type { TestApp } from './app.js';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.js';
import { PASSWORD, invite } from './console.js';

/** `describe` where Chromium is (always on CI), else `describe.skip` — a developer machine without it skips. */
export const describeInBrowser = existsSync(CHROMIUM) || process.env.CI ? describe : describe.skip;

/**
 * A connection to the run's one Chromium (test/support/browser-setup.ts); its close() ends the connection and
 * the contexts it opened. Without that Chromium (a project that does not start it), a browser of its own.
 */
export function launchChromium(): Promise<Browser> {
  const endpoint = inject('chromiumEndpoint');
  if (endpoint) return chromium.connect(endpoint);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const OUTPUT = join(import.meta.dirname, '..', '..', 'test-output');
const DOCS = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

/**
 * What a person can use: no serious or critical axe-core violation and nothing wider than the
 * viewport. With `shot`, a full-page screenshot into test-output/; UPDATE_SCREENSHOTS=1 also copies
 * it to docs/screenshots/ when the docs show it (`readmeShots`).
 */
export async function checkPage(page: Page, shot?: string, readmeShots: ReadonlySet<string> = new Set()): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<Array<{ id: string; impact: string }>>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`);
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), page.url()).toEqual([]);
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow, page.url()).toBeLessThanOrEqual(0);
  if (!shot) return;
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, `${shot}.png`), fullPage: true });
  if (process.env.UPDATE_SCREENSHOTS && readmeShots.has(shot)) copyFileSync(join(OUTPUT, `${shot}.png`), join(DOCS, `${shot}.png`));
}

/**
 * A new page of `width` × 900 px signed in to the console as a new user of `role`, through the invite
 * page as a person would, on the overview; it answers every "Delete …?" question with yes.
 */
export async function consolePage(browser: Browser, t: TestApp, base: string, entityId: number, role: Role, width: number): Promise<Page> {
  const { token } = await invite(t, entityId, role);
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(`${base}/console/invite/${token}`);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.waitForURL(`${base}/console`);
  return page;
}
