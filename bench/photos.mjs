// Photo-like test images, made here rather than downloaded: smooth colour fields (out-of-focus
// areas), mid-scale structure (edges, texture) and per-pixel grain (sensor noise), the three scales
// that make a camera photo cost what it costs to encode. Deterministic: the same seed gives the same
// bytes. A 12-megapixel JPEG takes about a second to make; `variant` turns one into any number of
// distinct files (distinct SHA-256, identical pixels) in microseconds.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

/** A 32-bit PRNG (mulberry32): fast, seedable, good enough for pixels. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random pixels of a small image (`channels` 3: colour, 1: grey), scaled up smoothly to width × height. */
async function field(next, cells, width, height, channels) {
  const w = Math.max(2, Math.round(width / cells));
  const h = Math.max(2, Math.round(height / cells));
  const pixels = Buffer.alloc(w * h * channels);
  for (let i = 0; i < pixels.length; i++) pixels[i] = Math.floor(next() * 256);
  return sharp(pixels, { raw: { width: w, height: h, channels } }).resize(width, height, { kernel: 'cubic', fit: 'fill' }).raw().toBuffer();
}

/**
 * A photo-like JPEG of width × height (default 4000 × 3000, 12 megapixels) at camera quality (90).
 * `exif` adds an EXIF block (e.g. GPS tags) the way a phone camera writes one.
 */
export async function photoJpeg(seed, { width = 4000, height = 3000, quality = 90, exif } = {}) {
  const next = random(seed);
  // Colour lives in the broad fields; texture and grain are mostly light and dark, as in photos.
  const [broad, detail] = await Promise.all([field(next, 400, width, height, 3), field(next, 10, width, height, 1)]);
  const pixels = Buffer.alloc(width * height * 3);
  for (let p = 0, i = 0; p < width * height; p++) {
    const light = 0.45 * detail[p] + (next() - 0.5) * 20;
    for (let c = 0; c < 3; c++, i++) pixels[i] = Math.max(0, Math.min(255, 0.55 * broad[i] + light));
  }
  let image = sharp(pixels, { raw: { width, height, channels: 3 } });
  if (exif) image = image.withExif(exif);
  return image.jpeg({ quality }).toBuffer();
}

/** The same picture as another file: a JPEG comment (COM segment) holding `n` after the SOI marker. */
export function variant(jpeg, n) {
  const text = Buffer.from(`variant ${n}`);
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(text.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, text, jpeg.subarray(2)]);
}

const CACHE = join(tmpdir(), 'art-catalog-bench-photos');

/**
 * The 12-megapixel photos of `seeds`, made once per machine in a child process and kept in the temp
 * folder: making them takes a second each and leaves ~400 MB of freed pixel memory in the maker's
 * malloc arenas, which would count in a bench's peak RSS.
 */
export function cachedPhotos(seeds) {
  const path = (seed) => join(CACHE, `photo-${seed}.jpg`);
  const missing = seeds.filter((seed) => !existsSync(path(seed)));
  if (missing.length > 0) execFileSync(process.execPath, [fileURLToPath(import.meta.url), CACHE, ...missing.map(String)], { stdio: 'inherit' });
  return seeds.map((seed) => readFileSync(path(seed)));
}

// `node bench/photos.mjs DIR SEED…` writes DIR/photo-SEED.jpg for each seed.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, ...seeds] = process.argv.slice(2);
  mkdirSync(dir, { recursive: true });
  for (const seed of seeds) {
    const temp = join(dir, `.photo-${seed}-${process.pid}.jpg`);
    writeFileSync(temp, await photoJpeg(Number(seed)));
    renameSync(temp, join(dir, `photo-${seed}.jpg`));
  }
}
