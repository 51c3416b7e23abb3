import { notFound } from '../domain/errors.js';
import { parseId } from '../domain/ids.js';

/** A record id from a path; anything else names no record: 404, as in the API. */
export function recordId(raw: string): number {
  const id = parseId(raw);
  if (id === undefined) throw notFound('Record');
  return id;
}

/** A cursor from a query string: a record id, or 0 (the start) when absent or not a whole number. */
export const cursor = (raw: unknown): number => (typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : 0);
