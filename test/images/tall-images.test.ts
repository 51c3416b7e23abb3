import sharp from 'sharp';
import { expect, test } from 'vitest';
import { deriveImage, derivativeWidths, MAX_DERIVATIVE_PIXELS, MAX_SIDE } from '../../src/images/derive.js';

/** Issue 34, item 3: a long scroll gets derivatives fitted within the encoders' 16,383 px (it failed before: an encoder error, retried forever). */

test('a 1,000 x 20,000 scroll gets derivatives no side of which passes 16,383 px nor 4 megapixels, in every format', async () => {
  expect(derivativeWidths(1000, 20_000)).toEqual([447]);
  // Past 16,383 px before the area: 200 x 20,000 gives 163 px wide copies, 16,300 px high.
  expect(derivativeWidths(200, 20_000)).toEqual([163]);
  // A photo keeps its three widths.
  expect(derivativeWidths(4000, 3000)).toEqual([480, 960, 1600]);
  const scroll = await sharp({ create: { width: 1000, height: 20_000, channels: 3, background: { r: 120, g: 90, b: 60 } } }).png().toBuffer();
  const derived = await deriveImage(scroll);
  expect(derived.derivatives.map((d) => [d.format, d.width, d.height])).toEqual([
    ['avif', 447, 8940], ['webp', 447, 8940], ['jpeg', 447, 8940],
  ]);
  expect(Math.max(...derived.derivatives.map((d) => d.height))).toBeLessThanOrEqual(MAX_SIDE);
  expect(Math.max(...derived.derivatives.map((d) => d.width * d.height))).toBeLessThanOrEqual(MAX_DERIVATIVE_PIXELS);
}, 120_000);
