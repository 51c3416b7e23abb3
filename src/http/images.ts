import type { FastifyInstance } from 'fastify';
import { presentImage, type ImageView } from '../images/present.js';
import { imageState, imageStates } from '../store/images.js';

type WithImage<T> = T & { image: ImageView | null };

/** A record as the API answers it: with `image`, the platform's copy of its image_url (decisions §10). */
export async function withImage<T extends { image_url: string | null }>(app: FastifyInstance, record: T): Promise<WithImage<T>> {
  return { ...record, image: presentImage(await imageState(app.db, record.image_url), app.config.publicBaseUrl) };
}

/** A page of records with their `image`, read in one statement. */
export async function withImages<T extends { image_url: string | null }>(app: FastifyInstance, records: readonly T[]): Promise<Array<WithImage<T>>> {
  const states = await imageStates(app.db, records.map((record) => record.image_url));
  const base = app.config.publicBaseUrl;
  return records.map((record) => ({ ...record, image: presentImage(record.image_url === null ? null : states.get(record.image_url)!, base) }));
}
