import {
  WRITABLE_ARTWORK_FIELDS, type ArtworkFields, type ArtworkPostBody, type ArtworkPutBody, type ViewInput,
} from '../schemas/artworks.js';
import { readDimensions } from './dimensions.js';
import { Problems, checkArtistName, checkCreationYear, checkText, normalizeTitle, pick, upperCase } from './rules.js';

export type ArtworkPatch = Partial<ArtworkFields>;
export type ArtworkInput = ArtworkPatch & { title: string };

/** Fields recorded in the changelog for artworks, in the order they are listed. */
export const ARTWORK_CHANGE_FIELDS = [...WRITABLE_ARTWORK_FIELDS, 'source_fingerprint', 'last_synced_at'] as const;

const MEASURES = ['height', 'width', 'depth'] as const;

/** One more view as stored and compared: every member present, in one order (docs/api.md, More views of a work). */
export interface StoredView { url: string; caption: string | null; alt: string | null; role: NonNullable<ViewInput['role']> | null }

/** The views as the column holds them: canonical JSON text, so equal views compare equal; none is null. */
export function viewsText(views: readonly ViewInput[] | null | undefined): string | null {
  if (!views || views.length === 0) return null;
  const stored: StoredView[] = views.map((view) => ({ url: view.url, caption: view.caption ?? null, alt: view.alt ?? null, role: view.role ?? null }));
  return JSON.stringify(stored);
}

export const parseViews = (text: string | null): StoredView[] => (text === null ? [] : JSON.parse(text) as StoredView[]);

const hasTwoDecimalsAtMost = (value: number) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6;

type Body = Record<string, unknown> & { additional_images?: readonly ViewInput[] | null };

function normalize(body: Body, put: boolean): ArtworkPatch {
  const problems = new Problems();
  const { additional_images: views, ...fields } = body;
  const patch = fields as ArtworkPatch;
  checkText(patch, problems);
  for (const [i, view] of (views ?? []).entries()) checkText({ [`additional_images/${i}/caption`]: view.caption, [`additional_images/${i}/alt`]: view.alt }, problems);
  if (patch.title != null) patch.title = normalizeTitle(patch.title, problems);
  checkCreationYear(patch.creation_year, problems);
  checkArtistName(patch.artist_name, problems);
  for (const field of MEASURES) {
    const value = patch[field];
    if (value != null && !hasTwoDecimalsAtMost(value)) problems.add(field, 'must have at most 2 decimals');
  }
  if (!put) checkPosted(patch, problems);
  problems.throwIfAny();
  if (patch.currency != null) patch.currency = upperCase(patch.currency);
  if (views !== undefined) patch.additional_images = viewsText(views);
  // Clearing the display restores the default.
  if (put && patch.price_display === null) patch.price_display = 'shown';
  readMeasures(patch);
  return patch;
}

/**
 * A write that gives `dimensions` and no measured value has them read from the text; a text the
 * reader cannot read plainly leaves them null (docs/api.md, Measured dimensions).
 */
function readMeasures(patch: ArtworkPatch): void {
  if (typeof patch.dimensions !== 'string') return;
  if ([...MEASURES, 'dimension_unit' as const].some((field) => patch[field] != null)) return;
  const read = readDimensions(patch.dimensions);
  patch.height = read?.height ?? null;
  patch.width = read?.width ?? null;
  patch.depth = read?.depth ?? null;
  patch.dimension_unit = read?.dimension_unit ?? null;
}

/**
 * A POST describes the fields it sends on their own (it may create the work): measures come with
 * their unit, an edition number with the edition's size.
 */
function checkPosted(patch: ArtworkPatch, problems: Problems): void {
  if (MEASURES.some((field) => patch[field] != null) && patch.dimension_unit == null) {
    problems.add('dimension_unit', 'is required with height, width or depth');
  }
  if (patch.edition_number != null && patch.edition_size == null) problems.add('edition_size', 'is required with edition_number');
}

type Coherent = Pick<ArtworkFields, 'height' | 'width' | 'depth' | 'dimension_unit' | 'edition_size' | 'edition_number'>;

/** The rules between fields, on the whole record a write leaves (a PUT may send one of them). */
export function checkArtworkCoherence(artwork: Coherent): void {
  const problems = new Problems();
  if (MEASURES.some((field) => artwork[field] != null) && artwork.dimension_unit == null) {
    problems.add('dimension_unit', 'is required with height, width or depth');
  }
  if (artwork.edition_number != null) {
    if (artwork.edition_size == null) problems.add('edition_size', 'is required with edition_number');
    else if (artwork.edition_number > artwork.edition_size) problems.add('edition_number', `must be at most edition_size (${artwork.edition_size})`);
  }
  problems.throwIfAny();
}

/** The artwork a POST describes: its writable fields, normalized. */
export function artworkFromPost(body: ArtworkPostBody): ArtworkInput {
  const input = normalize(pick(body as Body, WRITABLE_ARTWORK_FIELDS as never), false) as ArtworkInput;
  checkArtworkCoherence({ ...NO_COHERENT, ...input });
  return input;
}

const NO_COHERENT: Coherent = { height: null, width: null, depth: null, dimension_unit: null, edition_size: null, edition_number: null };

/** The changes a PUT asks for: `null` clears a field, an absent field stays. */
export const artworkFromPut = (body: ArtworkPutBody): ArtworkPatch =>
  normalize(pick(body as Body, WRITABLE_ARTWORK_FIELDS as never), true);
