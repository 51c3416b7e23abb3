import { describe, expect, test } from 'vitest';
import { convertMeasure, readDimensions } from '../../src/domain/dimensions.js';

/**
 * The dimension reader (docs/api.md, Measured dimensions) against dimensions as galleries write them:
 * the common forms are read, anything else is left null rather than guessed.
 */

type Read = [height: number, width: number, depth: number | null, unit: 'cm' | 'mm' | 'in'];

const READ: Array<[string, Read]> = [
  ['200 x 160 cm', [200, 160, null, 'cm']],
  ['200 × 160 × 4 cm', [200, 160, 4, 'cm']],
  ['H 30 x W 20 cm', [30, 20, null, 'cm']],
  ['30,5 x 20 cm', [30.5, 20, null, 'cm']],
  ['78 3/4 x 63 in', [78.75, 63, null, 'in']],
  ['78 ¾ × 63 in', [78.75, 63, null, 'in']],
  ['Oil on canvas (200 x 160 cm)', [200, 160, null, 'cm']],
  ['200x160cm', [200, 160, null, 'cm']],
  ['200 cm x 160 cm', [200, 160, null, 'cm']],
  ['200 X 160 CM', [200, 160, null, 'cm']],
  ['120 x 90 x 45 cm', [120, 90, 45, 'cm']],
  ['29.7 x 21 cm', [29.7, 21, null, 'cm']],
  ['29,7 × 21,0 cm', [29.7, 21, null, 'cm']],
  ['500 x 700 mm', [500, 700, null, 'mm']],
  ['12 x 9 inches', [12, 9, null, 'in']],
  ['12 x 9 in.', [12, 9, null, 'in']],
  ['24" x 36"', [24, 36, null, 'in']],
  ['24 x 36"', [24, 36, null, 'in']],
  ['78¾ x 63 in', [78.75, 63, null, 'in']],
  ['78-3/4 x 63 in', [78.75, 63, null, 'in']],
  ['10 1/2 x 8 1/4 in', [10.5, 8.25, null, 'in']],
  ['10 ½ × 8 ¼ × 1 in', [10.5, 8.25, 1, 'in']],
  ['W 20 x H 30 cm', [30, 20, null, 'cm']],
  ['h. 30 x w. 20 x d. 10 cm', [30, 20, 10, 'cm']],
  ['Height: 30 x Width: 20 cm', [30, 20, null, 'cm']],
  ['Sheet: 50 x 70 cm', [50, 70, null, 'cm']],
  ['Image size 40 x 30 cm, signed lower right', [40, 30, null, 'cm']],
  ['Bronze, 45 x 20 x 20 cm, edition of 8', [45, 20, 20, 'cm']],
  ['Framed (100 x 80 cm)', [100, 80, null, 'cm']],
  ['100 by 80 cm', [100, 80, null, 'cm']],
  ['40 x 30 centimetres', [40, 30, null, 'cm']],
  ['420 x 297 millimeters', [420, 297, null, 'mm']],
  ['10 1/8 x 8 in', [10.13, 8, null, 'in']],
];

const UNREAD: string[] = [
  '200 x 160',
  '78 3/4 x 63 in (200 x 160 cm)',
  'variable dimensions',
  'Dimensions variable',
  'installation dimensions variable',
  '',
  'Ø 30 cm',
  '30 cm high',
  'A4',
  '20 x 30 in oil on canvas',
  '1,200 x 800 mm',
  '1.200 x 800 mm',
  'Sheet 50 x 70 cm; image 40 x 30 cm',
  'unframed 80 x 60 cm, framed 90 x 70 cm',
  '200 x 160 cm x 4 in',
  'H 30 x 20 cm',
  'H 30 x H 20 cm',
  '0 x 20 cm',
  '20 x 30 feet',
  'approx. 2 m wide',
  'Edition 3/50',
  'about life size',
  '3/4 x 2 in x',
  `${'9 '.repeat(200)}x 3 cm`,
];

describe('readDimensions', () => {
  test('has at least 40 real-world cases', () => {
    expect(READ.length + UNREAD.length).toBeGreaterThanOrEqual(40);
  });

  test.each(READ)('reads %j', (text, [height, width, depth, unit]) => {
    expect(readDimensions(text)).toEqual({ height, width, depth, dimension_unit: unit });
  });

  test.each(UNREAD)('leaves %j null', (text) => {
    expect(readDimensions(text)).toBeNull();
  });

  test('null and undefined are not read', () => {
    expect(readDimensions(null)).toBeNull();
    expect(readDimensions(undefined)).toBeNull();
  });
});

describe('convertMeasure', () => {
  test('converts between cm, mm and in to one decimal', () => {
    expect(convertMeasure(200, 'cm', 'in')).toBe(78.7);
    expect(convertMeasure(63, 'in', 'cm')).toBe(160);
    expect(convertMeasure(500, 'mm', 'cm')).toBe(50);
    expect(convertMeasure(500, 'mm', 'in')).toBe(19.7);
  });
});
