import { client, startApp, tenant, type Tenant, type TestApp } from './app.js';
import { fileServer, type FileServer } from './file-server.js';

/** What a feeds test file works with: an app reaching local addresses, a file server, a gallery and its client. */
export interface FeedsSetup {
  t: TestApp;
  files: FileServer;
  gallery: Tenant;
  api: ReturnType<typeof client>;
}

/**
 * The app a feeds test file starts once: private addresses allowed (the file server is local) and
 * `FEED_CONCURRENCY` runs per process — 0 where the test drives runs itself (runFeed, as the feed's job does).
 */
export async function startFeeds(feedConcurrency: '0' | '1' = '0'): Promise<FeedsSetup> {
  const files = await fileServer();
  const t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: feedConcurrency });
  const gallery = await tenant(t);
  return { t, files, gallery, api: client(t, gallery.key) };
}

export async function closeFeeds(setup: Partial<FeedsSetup>): Promise<void> {
  await setup.t?.close();
  await setup.files?.close();
}
