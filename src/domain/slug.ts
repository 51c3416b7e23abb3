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
  const known = recentSlugs.get(input);
  if (known !== undefined) return known;
  const slug = slugOf(input);
  if (input.length > RECENT_SLUG_INPUT_MAX) return slug;
  if (recentSlugs.size >= RECENT_SLUGS_MAX) recentSlugs.clear();
  recentSlugs.set(input, slug);
  return slug;
}

/**
 * The slugs of the latest inputs. A write slugs an artist's name for its check, its fingerprint and
 * its artist record, and a batch's items name the same artists again and again: six slugs per item of
 * a batch of 100 new works, ~1.8 µs each, of which at most two are new (docs/performance.md, Writes,
 * lists and growth). Bounded by count and by the length of what it keeps (under 1 MB); cleared when full.
 */
const recentSlugs = new Map<string, string>();
const RECENT_SLUGS_MAX = 1024;
const RECENT_SLUG_INPUT_MAX = 200;

function slugOf(input: string): string {
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
