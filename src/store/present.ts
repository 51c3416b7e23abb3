import type { Db, ImageStatus } from '../db/types.js';
import type { StoredView } from '../domain/artwork.js';
import { imageStates, type ImageState, type StoredDerivative } from './images.js';

/**
 * The one presenter of a record (docs/api.md, Images; docs/api.md, More views of a work): what GET, lists,
 * webhook messages, the public pages and the console show of a stored record is made here, so a field
 * added to one is in all of them.
 */

/** The API's `image` (docs/api.md, Images). */
export interface ImageView {
  status: ImageStatus;
  width: number | null;
  height: number | null;
  /** The 960 px JPEG (or the largest there is, for a smaller original). */
  src: string | null;
  srcset: { avif: string; webp: string; jpeg: string } | null;
  error: string | null;
  checked_at: string | null;
}

/** The width `src` names: wide enough for most layouts, far lighter than the 1600 px copy. */
export const SRC_WIDTH = 960;
/** The copy Open Graph and JSON-LD name. */
export const SHARE_WIDTH = 1600;

export const imageUrl = (base: string, name: string): string => `${base}/images/${name}`;

/** A stored image state as the API shows it; null for a record without image_url. */
export function presentImage(state: ImageState | null, base: string): ImageView | null {
  if (!state) return null;
  const derivatives = state.status === 'ready' && state.derivatives ? JSON.parse(state.derivatives) as StoredDerivative[] : [];
  const ready = derivatives.length > 0;
  return {
    status: state.status,
    width: ready ? state.width : null,
    height: ready ? state.height : null,
    src: ready ? imageUrl(base, pick(derivatives, 'jpeg', SRC_WIDTH).name) : null,
    srcset: ready ? { avif: srcset(derivatives, 'avif', base), webp: srcset(derivatives, 'webp', base), jpeg: srcset(derivatives, 'jpeg', base) } : null,
    error: state.error,
    checked_at: state.checked_at,
  };
}

/** The copy of a format at `width`, else the largest narrower one, else the narrowest. */
export function pick(derivatives: readonly StoredDerivative[], format: StoredDerivative['format'], width: number): StoredDerivative {
  const ofFormat = derivatives.filter((d) => d.format === format).sort((a, b) => a.width - b.width);
  return ofFormat.filter((d) => d.width <= width).at(-1) ?? ofFormat[0]!;
}

export function srcset(derivatives: readonly StoredDerivative[], format: StoredDerivative['format'], base: string): string {
  return derivatives.filter((d) => d.format === format).sort((a, b) => a.width - b.width)
    .map((d) => `${imageUrl(base, d.name)} ${d.width}w`).join(', ');
}

type WithImage<T> = T & { image: ImageView | null };
type WithViews<T> = Omit<T, 'additional_images'> & { image: ImageView | null; additional_images: Array<StoredView & { image: ImageView | null }> };

/** Records (a page, or one) with their `image`, the platform's copy of their image_url, read in one statement. */
export async function presentRecords<T extends { image_url: string | null }>(db: Db, base: string, records: readonly T[]): Promise<Array<WithImage<T>>> {
  const states = await imageStates(db, records.map((record) => record.image_url));
  return records.map((record) => ({ ...record, image: presentImage(record.image_url === null ? null : states.get(record.image_url)!, base) }));
}

/** One record (an event, or any record without views) as GET shows it. */
export async function presentRecord<T extends { image_url: string | null }>(db: Db, base: string, record: T): Promise<WithImage<T>> {
  return (await presentRecords(db, base, [record]))[0]!;
}

/** An artwork as GET shows it: its image and each additional view's, read in one statement. */
export async function presentArtwork<T extends { image_url: string | null; additional_images: StoredView[] }>(db: Db, base: string, artwork: T): Promise<WithViews<T>> {
  const states = await imageStates(db, [artwork.image_url, ...artwork.additional_images.map((view) => view.url)]);
  const show = (url: string | null) => presentImage(url === null ? null : states.get(url)!, base);
  return {
    ...artwork,
    image: show(artwork.image_url),
    additional_images: artwork.additional_images.map((view) => ({ ...view, image: show(view.url) })),
  };
}
