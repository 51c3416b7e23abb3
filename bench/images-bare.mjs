// The baseline of `npm run bench:images`: the same nine derivatives of the same 12-megapixel JPEGs
// as the service makes (same widths, formats, encoder settings, one decode per image), with plain
// sharp calls and nothing else: no fetch, no queue, no store, no database. The pipeline's images per
// second per core are reported against this, measured in the same run.
// Run alone: npm run build && node bench/images-bare.mjs [images=8] [concurrency=2] [--sharp-defaults]
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { cachedPhotos, variant } from './photos.mjs';

const WIDTHS = [480, 960, 1600];
const FORMATS = ['avif', 'webp', 'jpeg'];

/** The nine derivatives of one original, the way src/images/derive.ts makes them, with plain sharp. */
async function derivatives(jpeg, encoders) {
  const { data, info } = await sharp(jpeg).autoOrient().resize({ width: 1600, withoutEnlargement: true })
    .toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
  const out = [];
  for (const width of new Set(WIDTHS.map((w) => Math.min(w, info.width)))) {
    const resized = width === info.width ? sharp(data, raw) : sharp(data, raw).resize({ width });
    for (const format of FORMATS) {
      const image = format === 'jpeg' ? resized.clone().flatten({ background: '#ffffff' }) : resized.clone();
      out.push(await image.toFormat(format, encoders[format]).toBuffer());
    }
  }
  return out;
}

/**
 * Derives every JPEG of `jpegs`, `concurrency` at a time (the service's IMAGE_CONCURRENCY), with
 * sharp set up as the service sets it (sharp.cache/concurrency). Answers the wall and CPU seconds and
 * images per second per core: images per CPU second of this process, steady on a shared machine.
 */
export async function bareBaseline(jpegs, { concurrency = 2, sharpDefaults = false } = {}) {
  const { ENCODERS, configureSharp } = await import('../dist/images/derive.js');
  if (sharpDefaults) {
    sharp.cache(true);
    sharp.concurrency(0);
  } else {
    await configureSharp();
  }
  // Peak RSS from here on (Linux: writing 5 to clear_refs resets VmHWM): the photos made before do not count.
  writeFileSync('/proc/self/clear_refs', '5');
  const rssBeforeMb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
  const startCpu = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  let bytes = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < jpegs.length) {
      const jpeg = jpegs[next++];
      for (const out of await derivatives(jpeg, ENCODERS)) bytes += out.length;
    }
  }));
  const wallSeconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(startCpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const peakRssMb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
  return {
    images: jpegs.length, concurrency, sharp: { cache: sharp.cache().memory.max, concurrency: sharp.concurrency() }, rssBeforeMb, peakRssMb, wallSeconds, cpuSeconds, bytesPerImage: bytes / jpegs.length,
    imagesPerSecond: jpegs.length / wallSeconds, imagesPerCoreSecond: jpegs.length / cpuSeconds,
  };
}

/** `count` distinct 12-megapixel photo-like JPEGs: a few pictures, each as several files. */
export function benchPhotos(count, pictures = 4) {
  const base = cachedPhotos(Array.from({ length: Math.min(pictures, count) }, (_, i) => i + 1));
  return Array.from({ length: count }, (_, i) => variant(base[i % base.length], i));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [count = 8, concurrency = 2] = process.argv.slice(2).filter((arg) => !arg.startsWith('--')).map(Number);
  const result = await bareBaseline(benchPhotos(count), { concurrency, sharpDefaults: process.argv.includes('--sharp-defaults') });
  console.log(JSON.stringify(result, null, 2));
}
