import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The WebSocket of the run's one Chromium, '' where there is none (test/support/browser.ts then launches one). */
    chromiumEndpoint: string;
  }
}

/**
 * One Chromium per run for the browser files (test/browser): each connects to it (launchChromium in
 * test/support/browser.ts) and opens a new context per page, instead of starting a browser of its own.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync(CHROMIUM)) {
    project.provide('chromiumEndpoint', '');
    return undefined;
  }
  const server = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  project.provide('chromiumEndpoint', server.wsEndpoint());
  return () => server.close();
}
