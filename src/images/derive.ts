import { webcrypto } from 'node:crypto';
import type { default as SharpModule, Metadata, OutputInfo, Sharp } from 'sharp';
import pLimit from 'p-limit';

export type ImageFormat = 'avif' | 'webp' | 'jpeg';
/** The widths every image is offered at (docs/api.md, Images); never enlarged past the original. */
export const DERIVATIVE_WIDTHS = [480, 960, 1600] as const;
export const IMAGE_FORMATS: readonly ImageFormat[] = ['avif', 'webp', 'jpeg'];
/** At most this many pixels (docs/api.md, Images): a decompression bomb is refused before it is decoded. */
export const MAX_PIXELS = 100_000_000;

export interface Derivative { name: string; width: number; height: number; format: ImageFormat; contentType: string; bytes: Buffer }
export interface DerivedImage {
  /** SHA-256 hex of the original bytes: every name starts with it. */
  hash: string;
  /** Of the original, after EXIF orientation. */
  width: number;
  height: number;
  /** Each width of `derivativeWidths` in each of IMAGE_FORMATS. */
  derivatives: Derivative[];
}

/** An original the service will not keep; `message` is the one line the API shows (docs/api.md, Images). */
export class ImageRejected extends Error {
  override name = 'ImageRejected';
}

const EXTENSIONS: Record<ImageFormat, string> = { avif: 'avif', webp: 'webp', jpeg: 'jpg' };
export const CONTENT_TYPES: Record<ImageFormat, string> = { avif: 'image/avif', webp: 'image/webp', jpeg: 'image/jpeg' };

/** `${hash}-${width}.${ext}`: the same original bytes always give the same names. */
export function derivativeName(hash: string, width: number, format: ImageFormat): string {
  return `${hash}-${width}.${EXTENSIONS[format]}`;
}

const NAME = /^([0-9a-f]{64})-([1-9]\d{0,3})\.(avif|webp|jpg)$/;
/** The format a derivative name stands for, or undefined when the string is not such a name. */
export function derivativeFormat(name: string): ImageFormat | undefined {
  const ext = NAME.exec(name)?.[3];
  return ext === undefined ? undefined : IMAGE_FORMATS.find((format) => EXTENSIONS[format] === ext);
}

/** The WebP and AVIF encoders' largest side (docs/api.md, Images): every derivative fits within it. */
export const MAX_SIDE = 16_383;

/**
 * The largest derivative's pixels (docs/api.md, Images). The AVIF encoder holds ~23 bytes per pixel
 * while it encodes (measured: 315 MB for an 819 × 16,380 scroll, 37 MB for 1600 × 1200), so an
 * unbounded long scroll took the server past its 400 MB; 4 megapixels keep every photo's 1600 px
 * (up to 1600 × 2500) and hold one encode under ~100 MB.
 */
export const MAX_DERIVATIVE_PIXELS = 4_000_000;

/**
 * DERIVATIVE_WIDTHS capped at the original's width (a 300 px original: one width, 300; 1000 px: 480,
 * 960, 1000), at the width whose height still fits MAX_SIDE, and at the width whose pixels still fit
 * MAX_DERIVATIVE_PIXELS (a 1,000 × 20,000 scroll: one width, 447).
 */
export function derivativeWidths(originalWidth: number, originalHeight = originalWidth): number[] {
  const byArea = Math.floor(Math.sqrt((MAX_DERIVATIVE_PIXELS * originalWidth) / originalHeight));
  const fitting = Math.max(1, Math.min(originalWidth, Math.floor((MAX_SIDE * originalWidth) / originalHeight), byArea));
  return [...new Set(DERIVATIVE_WIDTHS.map((width) => Math.min(width, fitting)))];
}

/**
 * Encoder settings, chosen by measurement on 12-megapixel photo-like images (docs/performance.md
 * "Image encoders"; bench/image-encoders.mjs): each at the knee of its bytes-for-CPU curve. AVIF
 * effort 3 makes files ~25 % smaller than effort 0 at the same PSNR for 0.7 CPU s more per photo,
 * where effort 4 would take 4× that for another ~10 %; 4:2:0 colour (sharp's AVIF default is 4:4:4)
 * as in the JPEG and WebP, 20 % less encoder memory and CPU. WebP effort 4 saves 5 % over effort 2 for
 * 0.1 s and effort 6 nothing more; mozjpeg quality 75 is its usual web setting.
 * Derivatives are made once and served for years: bytes matter more than seconds, up to the knee.
 */
export const ENCODERS = {
  avif: { quality: 50, effort: 3, chromaSubsampling: '4:2:0' },
  webp: { quality: 75, effort: 4 },
  jpeg: { quality: 75, mozjpeg: true },
} as const;

/**
 * sharp's process-wide settings, for the server's memory goal (≤ 350 MB RSS during a 1,000-image
 * import with IMAGE_CONCURRENCY images at a time): no operation cache (each original is decoded
 * once and never again, so a cache would only hold up to 50 MB of pixels nobody asks for), and one
 * libvips thread per image, so IMAGE_CONCURRENCY images use that many cores and hold that many
 * decoded images, never cores × images. Measured in docs/performance.md.
 *
 * sharp and libvips are loaded with the first image, not with the module: ~9 MB resident that a
 * process which never sees an image (a read-mostly server, the CLI) does not pay.
 */
export function configureSharp(): Promise<typeof SharpModule> {
  sharpLoaded ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  });
  return sharpLoaded;
}
let sharpLoaded: Promise<typeof SharpModule> | undefined;

const ACCEPTED = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'heif']);

/** The checked header of an original: its format must be one the API accepts (docs/api.md, Images) and its size within MAX_PIXELS. */
async function inspect(sharp: typeof SharpModule, original: Buffer): Promise<{ width: number; height: number }> {
  let metadata: Metadata;
  try {
    metadata = await sharp(original, { limitInputPixels: false }).metadata();
  } catch {
    throw new ImageRejected('not an image');
  }
  // HEIF holds AVIF (AV1) and HEIC (HEVC); only AVIF is accepted, and sharp cannot decode HEVC anyway.
  const accepted = ACCEPTED.has(metadata.format) && (metadata.format !== 'heif' || metadata.compression === 'av1');
  if (!accepted || !metadata.width || !metadata.height) throw new ImageRejected('not an image');
  const pixels = metadata.width * metadata.height;
  if (pixels > MAX_PIXELS) throw new ImageRejected(`too large: ${Math.round(pixels / 1_000_000)} megapixels`);
  return metadata.autoOrient;
}

/**
 * SHA-256 (hex) of bytes already in memory, on libuv's threads: createHash would hold the event loop
 * ~200 ms for 25 MB. (The fetcher hashes as the bytes arrive instead: fetch.ts.)
 */
async function sha256(bytes: Buffer): Promise<string> {
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
}

/**
 * Decodes, checks (JPEG/PNG/WebP/AVIF/GIF/TIFF, ≤ 100 megapixels) and encodes; all of it runs on
 * libuv's threads, off the event loop. The original is decoded once, shrunk to the largest width
 * (JPEG's shrink-on-load makes that decode cheap) and every smaller width is made from those pixels.
 * Throws ImageRejected with the one line of docs/api.md, Images ("not an image", "too large: 130 megapixels").
 * `knownHash`: the original's SHA-256 when the caller has it already (the fetcher's).
 */
export async function deriveImage(original: Buffer, knownHash?: string, options: { timeoutMs?: number } = {}): Promise<DerivedImage> {
  const hash = knownHash ?? await sha256(original);
  const sharp = await configureSharp();
  const { width, height } = await inspect(sharp, original);
  const widths = derivativeWidths(width, height);
  const largest = widths[widths.length - 1]!;
  // docs/api.md, Images: one image's work is limited (60 s); each libvips pipeline stops at what is left.
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const seconds = () => Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
  let pixels: { data: Buffer; info: OutputInfo };
  try {
    pixels = await sharp(original, { limitInputPixels: MAX_PIXELS, failOn: 'error' })
      .autoOrient()
      .resize({ width: largest, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .timeout({ seconds: seconds() })
      .toBuffer({ resolveWithObject: true });
  } catch (error) {
    throw new ImageRejected(timedOut(error) ? 'took too long' : 'not an image');
  }
  const { data, info } = pixels;
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
  const derivatives: Derivative[] = [];
  for (const w of widths) {
    const resized = w === info.width ? sharp(data, raw) : sharp(data, raw).resize({ width: w, height: MAX_SIDE, fit: 'inside' });
    for (const format of IMAGE_FORMATS) {
      try {
        derivatives.push(await encode(resized.clone().timeout({ seconds: seconds() }), hash, w, format));
      } catch (error) {
        // Any encoder failure is the image's, never an outage to retry at once (docs/api.md, Images).
        throw new ImageRejected(timedOut(error) ? 'took too long' : `could not be converted to ${format.toUpperCase()}`);
      }
    }
  }
  return { hash, width, height, derivatives };
}

const timedOut = (error: unknown) => error instanceof Error && /timeout/i.test(error.message);

async function encode(image: Sharp, hash: string, width: number, format: ImageFormat): Promise<Derivative> {
  // sharp writes no metadata unless asked (no EXIF, XMP, IPTC or ICC): untagged pixels are sRGB.
  const encoded = format === 'jpeg' ? image.flatten({ background: '#ffffff' }).jpeg(ENCODERS.jpeg)
    : format === 'webp' ? image.webp(ENCODERS.webp) : image.avif(ENCODERS.avif);
  const { data, info } = await (format === 'avif' ? avifSlot(() => encoded.toBuffer({ resolveWithObject: true }))
    : encoded.toBuffer({ resolveWithObject: true }));
  return { name: derivativeName(hash, width, format), width: info.width, height: info.height, format, contentType: CONTENT_TYPES[format], bytes: data };
}

/**
 * AVIF encodes at once per process. The AVIF encoder holds ~80 MB of frames while it encodes a 1600 px
 * image, most of what an image in flight costs, so a process with a high IMAGE_CONCURRENCY does not
 * hold that many; but more than one, so that one slow file (each encode is limited by sharp's
 * `.timeout`, what is left of the image's 60 s) never holds every other image of the process behind it.
 * With the default IMAGE_CONCURRENCY=2 both images encode side by side: a 12-megapixel import then
 * peaked at 374 MB, within the server's 400 MB (docs/performance.md, Abuse scenario: 323 MB under the worst at once).
 */
export const AVIF_AT_ONCE = 2;
const avifSlot = pLimit(AVIF_AT_ONCE);
