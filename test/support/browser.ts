import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import type { Role } from '../../src/db/types.js';
import { startApp, type TestApp } from './app.js';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.js';
import { PASSWORD, invite } from './console.js';
import { photoOrigin, type ImageOrigin, type Photo } from './image-origin.js';

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

/** What a browser file's tests drive: set before its first test (inBrowser). */
export interface InBrowser {
  /** The app, listening on `base`. */
  readonly t: TestApp;
  /** `http://127.0.0.1:PORT`. */
  readonly base: string;
  /** A connection to the run's Chromium (launchChromium). */
  readonly browser: Browser;
  /** A new page of `width` × 900 px (the files look at 390 and 1,280). */
  newPage(width: number): Promise<Page>;
}

export interface InBrowserOptions {
  /** The app's settings; a function of its address where the app must know it before it starts (PUBLIC_BASE_URL). */
  env?: Record<string, string> | ((base: string) => Record<string, string>);
  /** startApp's options (the image worker). */
  app?: Parameters<typeof startApp>[2];
  /** Links name the listening address (the console's invite and feed links), set once it listens. */
  publicBaseUrl?: boolean;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The hooks every browser file (test/browser) shares: before its tests, the app (startApp) listening on
 * 127.0.0.1 and a connection to the run's Chromium; after them, both closed. Hooks a file adds after
 * this call run after it, and their after-hooks before its own (vitest's stack order), so a server the
 * app uses is started before it only when the file's hooks for it come first.
 */
export function inBrowser({ env = {}, app, publicBaseUrl = false }: InBrowserOptions = {}): InBrowser {
  let started: { t: TestApp; base: string; browser: Browser } | undefined;
  const ready = () => {
    if (!started) throw new Error('inBrowser: the app starts in beforeAll; use it in tests and later hooks');
    return started;
  };
  beforeAll(async () => {
    let t: TestApp;
    let base: string;
    if (typeof env === 'function') {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await startApp(env(base), undefined, app);
      await t.app.listen({ port, host: '127.0.0.1' });
    } else {
      t = await startApp(env, undefined, app);
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    }
    if (publicBaseUrl) t.app.config.publicBaseUrl = base;
    started = { t, base, browser: await launchChromium() };
  }, 120_000);
  afterAll(async () => {
    await started?.browser.close();
    await started?.t.close();
  });
  return {
    get t() { return ready().t; },
    get base() { return ready().base; },
    get browser() { return ready().browser; },
    newPage: (width) => ready().browser.newPage({ viewport: { width, height: 900 } }),
  };
}

/**
 * inBrowser for pages with a gallery's photos: `photos` served from `host` (photoOrigin in
 * test/support/image-origin.ts, at `origin`), an image store of its own in a temporary folder, and the
 * app fetching from that host with its image worker, on an address it knows before it starts (its image
 * links name it), rate limits lifted. All closed, and the folder removed, after the file's tests.
 */
export function inBrowserWithPhotos(photos: readonly Photo[], host: string): InBrowser & { readonly origin: string } {
  let origin: ImageOrigin | undefined;
  let storeDir: string | undefined;
  beforeAll(async () => {
    origin = await photoOrigin(photos, host);
    storeDir = mkdtempSync(join(tmpdir(), 'art-catalog-photos-'));
  });
  afterAll(async () => {
    await origin?.close();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });
  const web = inBrowser({
    env: (base) => ({ PUBLIC_BASE_URL: base, IMAGE_STORE: `file:${storeDir}`, IMAGE_FETCH_ALLOW_PRIVATE: 'true', RATE_LIMIT_SUBSCRIBER: '100000', PUBLIC_RATE_LIMIT: '100000' }),
    app: { imageWorker: { pollMs: 20 } },
  });
  return Object.defineProperty(web, 'origin', { get: () => origin!.base }) as InBrowser & { readonly origin: string };
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
 * page as a person would, on the overview, or on the console's page `nav` names (its link in the
 * console's navigation); it answers every "Delete …?" question with yes.
 */
export async function consolePage(web: InBrowser, entityId: number, role: Role, width: number, nav?: string): Promise<Page> {
  const { token } = await invite(web.t, entityId, role);
  const page = await web.newPage(width);
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(`${web.base}/console/invite/${token}`);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.waitForURL(`${web.base}/console`);
  if (nav) {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: nav, exact: true }).click();
    await page.waitForURL(`${web.base}/console/${nav.toLowerCase()}`);
  }
  return page;
}
