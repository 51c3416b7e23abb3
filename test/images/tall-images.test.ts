import sharp from 'sharp';
import { expect, test } from 'vitest';
import { deriveImage, derivativeWidths, MAX_SIDE } from '../../src/images/derive.js';

/** Issue 34, item 3: a long scroll gets derivatives fitted within the encoders' 16,383 px (it failed before: an encoder error, retried forever). */

test('a 1,000 x 20,000 scroll gets derivatives no side of which passes 16,383 px, in every format', async () => {
  expect(derivativeWidths(1000, 20_000)).toEqual([480, 819]);
  const scroll = await sharp({ create: { width: 1000, height: 20_000, channels: 3, background: { r: 120, g: 90, b: 60 } } }).png().toBuffer();
  const derived = await deriveImage(scroll);
  expect(derived.derivatives.map((d) => [d.format, d.width, d.height])).toEqual([
    ['avif', 480, 9600], ['webp', 480, 9600], ['jpeg', 480, 9600],
    ['avif', 819, 16_380], ['webp', 819, 16_380], ['jpeg', 819, 16_380],
  ]);
  expect(Math.max(...derived.derivatives.map((d) => d.height))).toBeLessThanOrEqual(MAX_SIDE);
}, 120_000);
