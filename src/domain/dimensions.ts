/**
 * Measured dimensions read from the free-text `dimensions` (docs/api.md, Artworks: measured
 * dimensions): the common written forms only — `200 x 160 cm`, `200 × 160 × 4 cm`, `H 30 x W 20 cm`,
 * `30,5 x 20 cm`, `78 3/4 x 63 in`, `78 ¾ × 63 in`, one such set inside other text. Anything else is
 * left unread (null) rather than guessed: no unit, two sets of measures, a thousands separator that
 * could be a decimal comma, a label on some numbers only.
 */

export type DimensionUnit = 'cm' | 'mm' | 'in';
export const DIMENSION_UNITS = ['cm', 'mm', 'in'] as const;

export interface Measured {
  height: number;
  width: number;
  depth: number | null;
  dimension_unit: DimensionUnit;
}

/** Longer than this, a text is not a dimensions line: it is not read (and the scan stays short). */
const READ_MAX = 300;

const VULGAR: Record<string, number> = { '¼': 0.25, '½': 0.5, '¾': 0.75, '⅛': 0.125, '⅜': 0.375, '⅝': 0.625, '⅞': 0.875, '⅓': 1 / 3, '⅔': 2 / 3 };
const VULGAR_CLASS = '[¼½¾⅛⅜⅝⅞⅓⅔]';
const LABEL = '(?:(?:height|width|depth|h|w|d)\\s*[:.]?\\s*)?';
const NUMBER = `(?:\\d+(?:[.,]\\d+)?(?:\\s*${VULGAR_CLASS}|[\\s-]+\\d{1,2}/\\d{1,2}(?![\\d/]))?|${VULGAR_CLASS})`;
// "in" followed by a word is English ("20 x 30 in oil"), not a unit.
const UNIT = '(?:centimet(?:er|re)s?|millimet(?:er|re)s?|cm|mm|inches|inch|in\\.?(?!\\s*\\p{L})|"|″)(?![\\p{L}\\d])';
const ONE = `${LABEL}${NUMBER}(?:\\s*${UNIT})?`;
const SEPARATOR = '\\s*(?:x|×|\\*|by)\\s*';
const SET = new RegExp(`(?<![\\p{L}\\d.,/])${ONE}(?:${SEPARATOR}${ONE}){1,2}`, 'giu');
const PART = new RegExp(`^(?:(height|width|depth|h|w|d)\\s*[:.]?\\s*)?(${NUMBER})(?:\\s*(${UNIT}))?$`, 'iu');
const SPLIT = new RegExp(SEPARATOR, 'iu');

function unitOf(text: string): DimensionUnit {
  const unit = text.toLowerCase();
  if (unit.startsWith('c')) return 'cm';
  if (unit.startsWith('m')) return 'mm';
  return 'in';
}

/** A number as written (`30`, `30,5`, `78 3/4`, `78¾`, `78-3/4`), or null when it is not plainly one. */
function numberOf(text: string): number | null {
  const match = /^(\d+)(?:[.,](\d+))?(?:\s*([¼½¾⅛⅜⅝⅞⅓⅔])|[\s-]+(\d{1,2})\/(\d{1,2}))?$/u.exec(text.trim());
  if (!match) return VULGAR[text.trim()] ?? null;
  const [, whole, decimals, vulgar, numerator, denominator] = match;
  // Three decimals after a comma or point may be a thousands separator: never guessed.
  if (decimals !== undefined && decimals.length > 2) return null;
  if (decimals !== undefined && (vulgar !== undefined || numerator !== undefined)) return null;
  let value = Number(`${whole}${decimals === undefined ? '' : `.${decimals}`}`);
  if (vulgar !== undefined) value += VULGAR[vulgar]!;
  if (numerator !== undefined) {
    const n = Number(numerator);
    const d = Number(denominator);
    if (d === 0 || n >= d) return null;
    value += n / d;
  }
  return value;
}

const LABELLED = { h: 'height', w: 'width', d: 'depth' } as const;

/** The measures of one matched set, or null when they cannot be told plainly. */
function readSet(text: string): Measured | null {
  const parts = text.split(SPLIT).map((part) => PART.exec(part.trim()));
  if (parts.some((part) => part === null)) return null;
  const units = parts.map((part) => part![3]).filter((unit): unit is string => unit !== undefined).map(unitOf);
  const last = parts.at(-1)![3];
  if (last === undefined || units.some((unit) => unit !== units[0])) return null;
  const values = parts.map((part) => numberOf(part![2]!));
  if (values.some((value) => value === null || value <= 0)) return null;
  const labels = parts.map((part) => part![1]?.[0]?.toLowerCase() as keyof typeof LABELLED | undefined);
  const measured: Record<'height' | 'width' | 'depth', number | null> = { height: null, width: null, depth: null };
  if (labels.every((label) => label === undefined)) {
    measured.height = values[0]!;
    measured.width = values[1]!;
    measured.depth = values[2] ?? null;
  } else {
    // Labelled: every number must carry its own, once each.
    if (labels.some((label) => label === undefined) || new Set(labels).size !== labels.length) return null;
    labels.forEach((label, i) => { measured[LABELLED[label!]] = values[i]!; });
  }
  if (measured.height === null || measured.width === null) return null;
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    height: round(measured.height), width: round(measured.width),
    depth: measured.depth === null ? null : round(measured.depth), dimension_unit: units[0]!,
  };
}

/** The one set of measures a dimensions text gives, or null (none, several, or not plain). */
export function readDimensions(text: string | null | undefined): Measured | null {
  if (text == null || text.length > READ_MAX) return null;
  const sets = [...text.matchAll(SET)];
  if (sets.length !== 1) return null;
  return readSet(sets[0]![0]);
}

const CM_PER: Record<DimensionUnit, number> = { cm: 1, mm: 0.1, in: 2.54 };

/** A measure in another unit, to one decimal (what a page shows beside the measure as given). */
export function convertMeasure(value: number, from: DimensionUnit, to: DimensionUnit): number {
  return Math.round((value * CM_PER[from]) / CM_PER[to] * 10) / 10;
}
