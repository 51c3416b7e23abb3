import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

/** The value of a sample line of the Prometheus text, e.g. `name{le="0.1"}`. */
const sample = (text: string, name: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
};

test('/metrics has a histogram of event-loop delay and the worst delay since start; a 150 ms block shows in both', async () => {
  const metrics = async () => (await client(t).get('/metrics')).body as string;
  const before = await metrics();
  expect(before).toContain('# TYPE art_catalog_event_loop_delay_seconds histogram');
  const slowBefore = sample(before, 'art_catalog_event_loop_delay_seconds_count') - sample(before, 'art_catalog_event_loop_delay_seconds_bucket{le="0.1"}');

  // Work that holds the event loop, as a request that does too much would.
  const until = performance.now() + 150;
  while (performance.now() < until) { /* blocked */ }

  await expect.poll(async () => {
    const text = await metrics();
    return sample(text, 'art_catalog_event_loop_delay_seconds_count') - sample(text, 'art_catalog_event_loop_delay_seconds_bucket{le="0.1"}');
  }).toBeGreaterThan(slowBefore);
  expect(sample(await metrics(), 'art_catalog_event_loop_delay_max_seconds')).toBeGreaterThanOrEqual(0.1);
});

test('what held the loop before the server listened (building the app) is not counted: the worst delay is the serving time\'s', async () => {
  const fresh = await startApp();
  try {
    const until = performance.now() + 150;
    while (performance.now() < until) { /* blocked, as importing and migrating do */ }
    // The sampler's next tick sees the block.
    await new Promise((resolve) => setTimeout(resolve, 30));
    await fresh.app.listen({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = (await client(fresh).get('/metrics')).body as string;
    expect(sample(text, 'art_catalog_event_loop_delay_max_seconds')).toBeLessThan(0.1);
    expect(sample(text, 'art_catalog_event_loop_delay_seconds_count') - sample(text, 'art_catalog_event_loop_delay_seconds_bucket{le="0.1"}')).toBe(0);
  } finally {
    await fresh.close();
  }
});
