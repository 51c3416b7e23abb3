import { notFound } from '../domain/errors.js';

/** Record ids are 32-bit integers on both dialects. */
const ID_MAX = 2_147_483_647;

/** A record id from a path; anything else names no record: 404, as in the API. */
export function recordId(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > ID_MAX) throw notFound('Record');
  return Number(raw);
}

/** A cursor from a query string: a record id, or 0 (the start) when absent or not a whole number. */
export const cursor = (raw: unknown): number => (typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : 0);
