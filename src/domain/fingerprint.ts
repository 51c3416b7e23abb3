import { createHash } from 'node:crypto';
import { slugify } from './slug.js';

export interface FingerprintInput {
  title: string;
  artist_name?: string | null | undefined;
  creation_year?: number | null | undefined;
}

/** Lower-case hex SHA-256 of `slug(artist_name)|slug(title)|year` (docs/api.md, Slugs and fingerprints). */
export function artworkFingerprint({ title, artist_name, creation_year }: FingerprintInput): string {
  const artist = artist_name == null ? '' : slugify(artist_name);
  const year = creation_year == null ? '' : String(creation_year);
  return createHash('sha256').update(`${artist}|${slugify(title)}|${year}`).digest('hex');
}
