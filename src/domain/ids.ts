import { ID_MAX, ID_PATTERN } from '../schemas/common.js';

const FORM = new RegExp(ID_PATTERN);

/** A record id from a path or query string, or undefined when it is none (not a positive integer, or past the 32-bit bound). */
export function parseId(raw: string | undefined): number | undefined {
  return raw !== undefined && FORM.test(raw) && Number(raw) <= ID_MAX ? Number(raw) : undefined;
}
