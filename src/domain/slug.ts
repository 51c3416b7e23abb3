import { createHash } from 'node:crypto';

/**
 * Version of the slug algorithm below; stored beside every fingerprint and event slug so a change can
 * recompute them (migration 005 moved version 1 to 2).
 */
export const SLUG_VERSION = 2;

const TRANSLITERATION: Record<string, string> = {
  'ß': 'ss', 'æ': 'ae', 'œ': 'oe', 'ø': 'o', 'đ': 'd', 'ł': 'l', 'þ': 'th', 'ð': 'd',
};

// Only marks that follow a Latin letter are accents to drop; marks of other scripts carry meaning.
const LATIN_ACCENTS = /(\p{Script=Latin})\p{M}+/gu;
const TRANSLITERATED = /[ßæœøđłþð]/g;
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/gu;
const EDGE_DASHES = /^-+|-+$/g;

/**
 * The normalized slug of docs/api.md, Slugs and fingerprints (version 2), used by fingerprints, event slugs and profile
 * slugs. An input that has text but nothing a slug keeps (`???`, `…`, `😀`) gets `x` and 12 hex digits
 * of its SHA-256, so two such titles stay two records.
 */
export function slugify(input: string): string {
  const slug = input
    .normalize('NFKD')
    .replace(LATIN_ACCENTS, '$1')
    .normalize('NFC')
    .toLowerCase()
    .replace(TRANSLITERATED, (ch) => TRANSLITERATION[ch] ?? ch)
    .replace(SEPARATORS, '-')
    .replace(EDGE_DASHES, '');
  const trimmed = input.trim();
  if (slug !== '' || trimmed === '') return slug;
  const digest = createHash('sha256').update(trimmed.normalize('NFC')).digest('hex');
  return `x${digest.slice(0, 12)}`;
}

/**
 * An event's slug (docs/api.md, Slugs and fingerprints): the normalized slug of the entity's slug, a space and the title.
 * The title is slugged on its own and joined with `-`, which is the same string for every title a slug
 * keeps something of, and lets a symbol-only title (`???`) get its own slug (step 4 of docs/api.md, Slugs and fingerprints) instead of
 * the entity's.
 */
export const eventSlug = (entitySlug: string, title: string): string => `${entitySlug}-${slugify(title)}`;
