import { createHash } from 'node:crypto';

/** Version of the slug algorithm below; stored beside every fingerprint so a change can recompute them. */
export const SLUG_VERSION = 1;

const TRANSLITERATION: Record<string, string> = {
  'ß': 'ss', 'æ': 'ae', 'œ': 'oe', 'ø': 'o', 'đ': 'd', 'ł': 'l', 'þ': 'th', 'ð': 'd',
};

// Only marks that follow a Latin letter are accents to drop; marks of other scripts carry meaning.
const LATIN_ACCENTS = /(\p{Script=Latin})\p{M}+/gu;
const TRANSLITERATED = /[ßæœøđłþð]/g;
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/gu;
const EDGE_DASHES = /^-+|-+$/g;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** The normalized slug of decisions §4, used by fingerprints, event slugs and profile slugs. */
export function slugify(input: string): string {
  const slug = input
    .normalize('NFKD')
    .replace(LATIN_ACCENTS, '$1')
    .normalize('NFC')
    .toLowerCase()
    .replace(TRANSLITERATED, (ch) => TRANSLITERATION[ch] ?? ch)
    .replace(SEPARATORS, '-')
    .replace(EDGE_DASHES, '');
  if (slug !== '' || !LETTER_OR_DIGIT.test(input)) return slug;
  const digest = createHash('sha256').update(input.normalize('NFC').trim()).digest('hex');
  return `x${digest.slice(0, 12)}`;
}
