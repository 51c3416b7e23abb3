// Chooses the image encoders' settings by measurement (docs/performance.md, Images): bytes,
// seconds and PSNR against the resized source, per format and setting, for all three widths of
// 12-megapixel photo-like JPEGs; and the cost of three ways to make the nine derivatives of one photo.
// Run: npm run build && node bench/image-encoders.mjs [photos=2]
import os from 'node:os';
import sharp from 'sharp';
import { photoJpeg } from './photos.mjs';

/** CPU seconds this process spends in `fn` (all threads): on a shared machine, steadier than wall time. */
async function cpuSeconds(fn) {
  const start = process.cpuUsage();
  const result = await fn();
  const used = process.cpuUsage(start);
  return { result, seconds: (used.user + used.system) / 1e6 };
}

sharp.cache(false);
sharp.concurrency(1);
const PHOTOS = Number(process.argv[2] ?? 2);
const WIDTHS = [1600, 960, 480];

const GRID = {
  jpeg: [60, 70, 75, 80, 85, 90].map((quality) => ({ quality, mozjpeg: true })),
  webp: [[70, 2], [75, 0], [75, 2], [75, 4], [75, 6], [80, 2], [85, 2]].map(([quality, effort]) => ({ quality, effort })),
  // sharp encodes AVIF with full-resolution colour (4:4:4) unless told otherwise; photos do not need it.
  avif: (process.env.AVIF_GRID ? JSON.parse(process.env.AVIF_GRID)
    : [[40, 0], [45, 0], [50, 0], [55, 0], [60, 0], [45, 1], [50, 1], [50, 2], [45, 3], [50, 3], [40, 4], [45, 4], [50, 4],
      [50, 0, '4:2:0'], [50, 3, '4:2:0'], [55, 3, '4:2:0'], [60, 3, '4:2:0'], [55, 4, '4:2:0']])
    .map(([quality, effort, chromaSubsampling = '4:4:4']) => ({ quality, effort, chromaSubsampling })),
};

/** Peak signal-to-noise ratio of `encoded` against the raw RGB `reference` (dB). */
async function psnr(encoded, reference, width, height) {
  const decoded = await sharp(encoded).removeAlpha().toColourspace('srgb').raw().toBuffer();
  let sum = 0;
  for (let i = 0; i < reference.length; i++) { const d = decoded[i] - reference[i]; sum += d * d; }
  const mse = sum / (width * height * 3);
  return 10 * Math.log10((255 * 255) / mse);
}

async function sources() {
  const list = [];
  for (let seed = 1; seed <= PHOTOS; seed++) {
    const jpeg = await photoJpeg(seed);
    const sizes = [];
    for (const width of WIDTHS) {
      const { data, info } = await sharp(jpeg).resize({ width }).raw().toBuffer({ resolveWithObject: true });
      sizes.push({ data, info });
    }
    list.push({ jpeg, sizes });
  }
  return list;
}

async function encoders(photos) {
  console.log(`| format | setting | KB per photo (480+960+1600) | KB at 960 | CPU s per photo (3 widths) | PSNR at 960 (dB) |`);
  console.log('|---|---|---:|---:|---:|---:|');
  for (const [format, settings] of Object.entries(GRID)) {
    for (const setting of settings) {
      let bytes = 0; let bytes960 = 0; let seconds = 0; let quality = 0;
      for (const { sizes } of photos) {
        for (const { data, info } of sizes) {
          const { result: out, seconds: spent } = await cpuSeconds(() => sharp(data, { raw: info }).toFormat(format, setting).toBuffer());
          seconds += spent;
          bytes += out.length;
          if (info.width === 960) { bytes960 += out.length; quality += await psnr(out, data, info.width, info.height); }
        }
      }
      const n = photos.length;
      const label = Object.entries(setting).map(([k, v]) => `${k} ${v}`).join(', ');
      console.log(`| ${format} | ${label} | ${(bytes / n / 1024).toFixed(0)} | ${(bytes960 / n / 1024).toFixed(0)} | ${(seconds / n).toFixed(2)} | ${(quality / n).toFixed(2)} |`);
    }
  }
}

/** Three ways to make the nine derivatives; the service uses "decode once". */
async function shapes(photos, encode) {
  const formats = ['avif', 'webp', 'jpeg'];
  const ways = {
    'a pipeline per output (9 decodes)': async (jpeg) => {
      for (const width of WIDTHS) for (const format of formats) await encode(sharp(jpeg).autoOrient().resize({ width }), format);
    },
    'clone() of one input (sharp decodes per clone)': async (jpeg) => {
      const base = sharp(jpeg).autoOrient();
      for (const width of WIDTHS) for (const format of formats) await encode(base.clone().resize({ width }), format);
    },
    'decode once to 1600 px pixels, resize from them': async (jpeg) => {
      const { data, info } = await sharp(jpeg).autoOrient().resize({ width: 1600 }).raw().toBuffer({ resolveWithObject: true });
      for (const width of WIDTHS) {
        const resized = sharp(data, { raw: info }).resize({ width });
        for (const format of formats) await encode(resized.clone(), format);
      }
    },
  };
  for (const [name, run] of Object.entries(ways)) {
    const { seconds } = await cpuSeconds(async () => { for (const { jpeg } of photos) await run(jpeg); });
    console.log(`| ${name} | ${(seconds / photos.length).toFixed(2)} |`);
  }
}

const { ENCODERS } = await import('../dist/images/derive.js');
console.log(`# ${PHOTOS} photo-like 12-megapixel JPEGs; sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}, concurrency 1, ${os.cpus().length} cores (shared machine)\n`);
const photos = await sources();
await encoders(photos);
console.log('\n| way, with the chosen encoders | CPU s per photo |\n|---|---:|');
await shapes(photos, (image, format) => image.toFormat(format, ENCODERS[format]).toBuffer());
console.log('\n| way, decode and resize only (raw pixels out) | CPU s per photo |\n|---|---:|');
await shapes(photos, (image) => image.raw().toBuffer());
