import type { FastifyInstance } from 'fastify';
import { presentImage, type ImageView } from '../../images/present.js';
import { imageState, imageStates } from '../../store/images.js';
import type { StoredView } from '../../domain/artwork.js';

type WithImage<T> = T & { image: ImageView | null };

/** A record as the API answers it: with `image`, the platform's copy of its image_url (docs/api.md, Images). */
export async function withImage<T extends { image_url: string | null }>(app: FastifyInstance, record: T): Promise<WithImage<T>> {
  return { ...record, image: presentImage(await imageState(app.db, record.image_url), app.config.publicBaseUrl) };
}

/** A page of records with their `image`, read in one statement. */
export async function withImages<T extends { image_url: string | null }>(app: FastifyInstance, records: readonly T[]): Promise<Array<WithImage<T>>> {
  const states = await imageStates(app.db, records.map((record) => record.image_url));
  const base = app.config.publicBaseUrl;
  return records.map((record) => ({ ...record, image: presentImage(record.image_url === null ? null : states.get(record.image_url)!, base) }));
}

type WithViews<T> = Omit<T, 'additional_images'> & { image: ImageView | null; additional_images: Array<StoredView & { image: ImageView | null }> };

/**
 * An artwork as the API answers it: its image and each additional view's, read in one statement
 * (docs/api.md, More views of a work).
 */
export async function withArtworkImages<T extends { image_url: string | null; additional_images: StoredView[] }>(app: FastifyInstance, artwork: T): Promise<WithViews<T>> {
  const urls = [artwork.image_url, ...artwork.additional_images.map((view) => view.url)];
  const states = await imageStates(app.db, urls);
  const base = app.config.publicBaseUrl;
  const show = (url: string | null) => presentImage(url === null ? null : states.get(url)!, base);
  return {
    ...artwork,
    image: show(artwork.image_url),
    additional_images: artwork.additional_images.map((view) => ({ ...view, image: show(view.url) })),
  };
}
