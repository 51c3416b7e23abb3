import { invalidFields, type FieldProblem } from './errors.js';
import { slugify } from './slug.js';

/**
 * Field rules the JSON schemas cannot express (docs/api.md, Requests and validation): trimmed title length, the year bound
 * that moves every January, date order, upper-cased codes. Schemas have already checked types.
 */

export const TITLE_MAX = 500;

/** Collects problems and throws them all as one 400 at the end. */
export class Problems {
  private readonly list: FieldProblem[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw invalidFields(this.list);
  }
}

export function normalizeTitle(title: string, problems: Problems): string {
  const trimmed = title.trim();
  if (trimmed.length === 0) problems.add('title', 'must not be empty or only spaces');
  else if ([...trimmed].length > TITLE_MAX) problems.add('title', `must be at most ${TITLE_MAX} characters after trimming`);
  return trimmed;
}

export const latestCreationYear = (now = new Date()): number => now.getUTCFullYear() + 1;

export function checkCreationYear(year: number | null | undefined, problems: Problems): void {
  if (year != null && year > latestCreationYear()) {
    problems.add('creation_year', `must be at most ${latestCreationYear()} (next year)`);
  }
}

/** An artist name must yield a slug (anything but blanks does), or it could not be resolved to an artist record. */
export function checkArtistName(name: string | null | undefined, problems: Problems): void {
  if (name != null && slugify(name) === '') problems.add('artist_name', 'must not be empty or only spaces');
}

export function checkDateOrder(start: string | null | undefined, end: string | null | undefined, problems: Problems): void {
  if (start != null && end != null && end < start) problems.add('end_date', 'must not be before start_date');
}

/**
 * Text every database can store and give back unchanged: well-formed Unicode (a lone surrogate would
 * come back as U+FFFD) without NUL (PostgreSQL text cannot hold it).
 */
export function checkText(fields: Record<string, unknown>, problems: Problems): void {
  for (const [field, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue;
    if (!value.isWellFormed()) problems.add(field, 'is not valid Unicode text (an unpaired surrogate)');
    else if (value.includes('\u0000')) problems.add(field, 'must not contain the NUL character');
  }
}

export const upperCase = <T extends string | null | undefined>(code: T): T => (code == null ? code : (code.toUpperCase() as T));

/** Keeps only the listed fields of a body (read-only echoes such as `id` drop out here). */
export function pick<T extends object, K extends keyof T>(body: T, fields: readonly K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const field of fields) if (body[field] !== undefined) picked[field] = body[field];
  return picked;
}
