#!/usr/bin/env node
// Photos processed at once against the event-loop budget (issue #48; docs/performance.md, Images): `--photos`
// (default 40) distinct 2,000 × 1,500 JPEGs posted in one batch to a real `serve` (SQLite,
// IMAGE_CONCURRENCY=2) while a probe in its own thread asks /healthz every 5 ms, until every image is
// ready. Measured: the worst and p99 /healthz answer while images are processed (goal ≤ 50 ms), the
// server's own worst event-loop delay (its /metrics), and images per CPU second of the server against
// bare sharp making the same derivatives of the same photos in this run (bench/images-bare.mjs).
// Each `--variant NAME:ENV=VALUE,ENV=VALUE` is another server setting measured in the same run, the
// variants taking turns `--rounds` times (default 2); `default` (no extra setting) is always one of them.
//
//   npm run build && node bench/images-loop.mjs [--photos 40] [--rounds 2] [--variant uv2:UV_THREADPOOL_SIZE=2]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bareBaseline } from './images-bare.mjs';
import { benchTenant, cpuSeconds, startService, stop } from './lib.mjs';
import { photoJpeg, variant } from './photos.mjs';
import { STALL_BUDGET_MS, quantile, round, sleep, startProbe } from './probe.mjs';

const { values: options } = parseArgs({
  options: { photos: { type: 'string', default: '40' }, rounds: { type: 'string', default: '2' }, variant: { type: 'string', multiple: true, default: [] } },
});
const PHOTOS = Number(options.photos);
const variants = [{ name: 'default', env: {} }, ...options.variant.map((spec) => {
  const [name, settings] = spec.split(':');
  return { name, env: Object.fromEntries(settings.split(',').map((pair) => pair.split('='))) };
})];

const base = await Promise.all([1, 2, 3, 4].map((seed) => photoJpeg(seed, { width: 2000, height: 1500 })));
let served = 0;
const origin = createServer((request, response) => {
  const n = Number(/^\/p(\d+)\.jpg$/.exec(request.url ?? '')?.[1]);
  if (!Number.isInteger(n)) return response.writeHead(404).end();
  const bytes = variant(base[n % base.length], n);
  response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': bytes.length }).end(bytes);
});
await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve));
const originUrl = `http://127.0.0.1:${origin.address().port}`;


async function once(setting) {
  const dir = mkdtempSync(join(tmpdir(), 'images-loop-'));
  const env = {
    DATABASE_URL: `sqlite:${join(dir, 'catalog.db')}`, IMAGE_STORE: `file:${join(dir, 'images')}`, IMAGE_FETCH_ALLOW_PRIVATE: 'true',
    IMAGE_CONCURRENCY: '2', RATE_LIMIT_PARTNER: '100000000', LOG_LEVEL: 'warn', PORT: '0', ...setting.env,
  };
  try {
    const { key } = benchTenant(env, 'Images Loop');
    const service = startService(env);
    const url = await service.url;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await fetch(`${url}/healthz`);
    const probe = startProbe(url);
    await sleep(300);
    const cpuBefore = cpuSeconds(service.child.pid);
    const started = performance.now();
    const first = served;
    served += PHOTOS;
    const items = Array.from({ length: PHOTOS }, (_, i) => ({ title: `Loop Photo ${first + i}`, artist_name: 'Loop Photographer', image_url: `${originUrl}/p${first + i}.jpg` }));
    const posted = await fetch(`${url}/v1/artworks/batch`, { method: 'POST', headers: auth, body: JSON.stringify({ items }) });
    if (posted.status !== 200) throw new Error(`batch: ${posted.status} ${await posted.text()}`);
    let images;
    do {
      await sleep(200);
      images = (await (await fetch(`${url}/v1/sync/status`, { headers: auth })).json()).images;
    } while (images.ready + images.failed < PHOTOS);
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(service.child.pid) - cpuBefore;
    const samples = [...(await probe.stop()).values()].flat().filter(Number.isFinite);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const loopWorst = Number(/^art_catalog_event_loop_delay_max_seconds (\S+)/m.exec(metrics)?.[1]) * 1000;
    await stop(service.child);
    return {
      variant: setting.name, ready: images.ready, failed: images.failed, wall_s: round(seconds), server_cpu_s: round(cpu), images_per_cpu_s: Math.round((PHOTOS / cpu) * 100) / 100,
      healthz_ms: { n: samples.length, p50: round(quantile(samples, 0.5)), p99: round(quantile(samples, 0.99)), max: round(Math.max(...samples)), over_50: samples.filter((ms) => ms > STALL_BUDGET_MS).length },
      loop_worst_ms: round(loopWorst), load_1min: round(loadavg()[0]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const bare = await bareBaseline(Array.from({ length: Math.min(PHOTOS, 12) }, (_, i) => variant(base[i % base.length], 100_000 + i)), { concurrency: 2 });
console.log(JSON.stringify({ bare_images_per_cpu_s: Math.round(bare.imagesPerCoreSecond * 100) / 100, load_1min: round(loadavg()[0]) }));
const results = [];
for (let r = 0; r < Number(options.rounds); r++) {
  for (const setting of variants) {
    const result = await once(setting);
    result.to_bare = Math.round((result.images_per_cpu_s / bare.imagesPerCoreSecond) * 100) / 100;
    results.push(result);
    console.log(JSON.stringify(result));
  }
}
origin.close();
