import { WRITABLE_ARTWORK_FIELDS, type ArtworkFields, type ArtworkPostBody, type ArtworkPutBody } from '../schemas/artworks.js';
import { Problems, checkArtistName, checkCreationYear, checkText, normalizeTitle, pick, upperCase } from './rules.js';

export type ArtworkPatch = Partial<ArtworkFields>;
export type ArtworkInput = ArtworkPatch & { title: string };

/** Fields recorded in the changelog for artworks, in the order they are listed. */
export const ARTWORK_CHANGE_FIELDS = [...WRITABLE_ARTWORK_FIELDS, 'source_fingerprint', 'last_synced_at'] as const;

function normalize(patch: ArtworkPatch): ArtworkPatch {
  const problems = new Problems();
  checkText(patch, problems);
  if (patch.title != null) patch.title = normalizeTitle(patch.title, problems);
  checkCreationYear(patch.creation_year, problems);
  checkArtistName(patch.artist_name, problems);
  problems.throwIfAny();
  if (patch.currency != null) patch.currency = upperCase(patch.currency);
  return patch;
}

/** The artwork a POST describes: its writable fields, normalized. */
export const artworkFromPost = (body: ArtworkPostBody): ArtworkInput =>
  normalize(pick(body as ArtworkPatch, WRITABLE_ARTWORK_FIELDS)) as ArtworkInput;

/** The changes a PUT asks for: `null` clears a field, an absent field stays. */
export const artworkFromPut = (body: ArtworkPutBody): ArtworkPatch =>
  normalize(pick(body as ArtworkPatch, WRITABLE_ARTWORK_FIELDS));
