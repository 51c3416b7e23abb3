import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { photoJpeg } from '../../bench/photos.mjs';
import { deriveImage, derivativeFormat, derivativeName, derivativeWidths, ImageRejected, type DerivedImage } from '../../src/images/derive.js';

/** deriveImage (docs/api.md, Images): checked formats and size, orientation, widths, formats, sRGB, no metadata, names. */

const EXIF_SECRET = 'Home of the photographer';
/** Whether the EXIF block holds a GPS IFD pointer (tag 0x8825, either byte order). */
const hasGpsPointer = (exif: Buffer) => exif.includes(Buffer.from([0x25, 0x88])) || exif.includes(Buffer.from([0x88, 0x25]));

/** A phone photo: 1200 × 900 pixels stored sideways (EXIF orientation 6), with GPS position and an artist tag. */
async function phonePhoto(): Promise<Buffer> {
  const photo = await photoJpeg(5, { width: 1200, height: 900 });
  return sharp(photo)
    .withExif({ IFD0: { Make: 'Phone', Artist: EXIF_SECRET }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '52/1 31/1 0/1', GPSLongitudeRef: 'E', GPSLongitude: '13/1 24/1 0/1' } })
    .withMetadata({ orientation: 6 })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A PNG header claiming width × height pixels (with a token pixel stream): enough for the size check. */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; ihdr[9] = 2;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(1))), chunk('IEND', Buffer.alloc(0))]);
}

describe('a phone photo with orientation, GPS and an artist in its EXIF', () => {
  let original: Buffer;
  let derived: DerivedImage;
  beforeAll(async () => {
    original = await phonePhoto();
    const input = await sharp(original).metadata();
    // The test means something only if the input really carries what must go.
    expect(input.orientation).toBe(6);
    expect(hasGpsPointer(input.exif!)).toBe(true);
    expect(input.exif!.includes(EXIF_SECRET)).toBe(true);
    derived = await deriveImage(original);
  });

  it('is upright: 900 × 1200 after the EXIF orientation, and so is every derivative', () => {
    expect(derived).toMatchObject({ width: 900, height: 1200 });
    for (const d of derived.derivatives) expect(d.height).toBe(Math.round((d.width * 1200) / 900));
  });

  it('comes at 480 px and at its own 900 px (never enlarged to 960 or 1600), each in AVIF, WebP and JPEG', async () => {
    const made = derived.derivatives.map((d) => `${d.width} ${d.format} ${d.contentType}`);
    expect(made).toEqual([480, 900].flatMap((w) => [`${w} avif image/avif`, `${w} webp image/webp`, `${w} jpeg image/jpeg`]));
    for (const d of derived.derivatives) {
      const meta = await sharp(d.bytes).metadata();
      expect(meta.format).toBe(d.format === 'avif' ? 'heif' : d.format);
      expect([meta.width, meta.height]).toEqual([d.width, d.height]);
    }
  });

  it('keeps no metadata: no EXIF (GPS and artist gone), no XMP, IPTC or ICC profile, sRGB pixels', async () => {
    for (const d of derived.derivatives) {
      const meta = await sharp(d.bytes).metadata();
      expect(meta.exif, d.name).toBeUndefined();
      expect(meta.xmp, d.name).toBeUndefined();
      expect(meta.iptc, d.name).toBeUndefined();
      expect(meta.icc, d.name).toBeUndefined();
      expect(meta.orientation ?? 1, d.name).toBe(1);
      expect(meta.space, d.name).toBe('srgb');
      expect(d.bytes.includes(EXIF_SECRET), d.name).toBe(false);
    }
  });

  it('is named by the SHA-256 of the original bytes, width and format', async () => {
    const { createHash } = await import('node:crypto');
    expect(derived.hash).toBe(createHash('sha256').update(original).digest('hex'));
    for (const d of derived.derivatives) {
      expect(d.name).toBe(derivativeName(derived.hash, d.width, d.format));
      expect(derivativeFormat(d.name)).toBe(d.format);
    }
    expect(derived.derivatives.map((d) => d.name)).toContain(`${derived.hash}-900.jpg`);
  });
});

describe('deriving', () => {
  it('offers 480, 960 and 1600 px, capped at the original\'s width', () => {
    expect(derivativeWidths(4000)).toEqual([480, 960, 1600]);
    expect(derivativeWidths(1600)).toEqual([480, 960, 1600]);
    expect(derivativeWidths(1000)).toEqual([480, 960, 1000]);
    expect(derivativeWidths(480)).toEqual([480]);
    expect(derivativeWidths(300)).toEqual([300]);
  });

  it('converts a wide-gamut (Display P3) photo to sRGB and drops its profile', async () => {
    const p3 = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#ff0000' } }).withIccProfile('p3').jpeg().toBuffer();
    expect((await sharp(p3).metadata()).icc).toBeDefined();
    const { derivatives } = await deriveImage(p3);
    const jpeg = derivatives.find((d) => d.format === 'jpeg')!;
    expect((await sharp(jpeg.bytes).metadata()).icc).toBeUndefined();
    // P3's pure red lies outside sRGB: converted, it is clipped to sRGB's red, with no green or blue added.
    const { data } = await sharp(jpeg.bytes).raw().toBuffer({ resolveWithObject: true });
    expect(data[0]).toBeGreaterThan(240);
    expect(data[1]).toBeLessThan(20);
  });

  it('makes one width of a small original, its own, and flattens transparency only in JPEG', async () => {
    const png = await sharp({ create: { width: 300, height: 200, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 0.5 } } }).png().toBuffer();
    const { width, derivatives } = await deriveImage(png);
    expect(width).toBe(300);
    expect(derivatives.map((d) => `${d.width} ${d.format}`)).toEqual(['300 avif', '300 webp', '300 jpeg']);
    const channels = await Promise.all(derivatives.map(async (d) => (await sharp(d.bytes).metadata()).hasAlpha));
    expect(channels).toEqual([true, true, false]);
  });

  it('accepts JPEG, PNG, WebP, AVIF, GIF and TIFF', async () => {
    const source = sharp({ create: { width: 320, height: 240, channels: 3, background: '#884422' } });
    for (const format of ['jpeg', 'png', 'webp', 'avif', 'gif', 'tiff'] as const) {
      const bytes = await source.clone().toFormat(format).toBuffer();
      const { width, derivatives } = await deriveImage(bytes);
      expect(width, format).toBe(320);
      expect(derivatives, format).toHaveLength(3);
    }
  });

  it('refuses what is not a photo format as "not an image": text, SVG, PDF, HEIC-less noise, a cut-off header', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="900" height="900"><rect width="900" height="900"/></svg>');
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF');
    const jpeg = await photoJpeg(3, { width: 320, height: 240 });
    for (const [what, bytes] of [['html', Buffer.from('<html><body>404</body></html>')], ['svg', svg], ['pdf', pdf], ['empty', Buffer.alloc(0)],
      ['noise', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))], ['header only', jpeg.subarray(0, 200)]] as const) {
      await expect(deriveImage(bytes), what).rejects.toThrow(new ImageRejected('not an image'));
    }
  });

  it('refuses more than 100 megapixels before decoding, saying how many', async () => {
    await expect(deriveImage(pngHeader(20_000, 6_500))).rejects.toThrow(new ImageRejected('too large: 130 megapixels'));
  });

  it('gives the same names to the same bytes and other names to other bytes', async () => {
    const a = await photoJpeg(7, { width: 320, height: 240 });
    const b = Buffer.concat([a, Buffer.from([0])]);
    const [first, again, other] = await Promise.all([deriveImage(a), deriveImage(Buffer.from(a)), deriveImage(b)]);
    expect(again.derivatives.map((d) => d.name)).toEqual(first.derivatives.map((d) => d.name));
    expect(other.hash).not.toBe(first.hash);
  });
});
