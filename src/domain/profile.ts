import type { ProfilePutBody } from '../schemas/profile.js';
import { invalidFields } from './errors.js';
import { Problems, checkText, upperCase } from './rules.js';

export const PROFILE_WRITABLE_FIELDS = ['description', 'external_url', 'ical_url', 'social_instagram', 'social_twitter', 'default_currency'] as const;
export type ProfilePatch = { -readonly [K in (typeof PROFILE_WRITABLE_FIELDS)[number]]?: string | null };

/** The interface's neutral names for the social fields, accepted as aliases (docs/api.md, Profile). */
const ALIASES = { social_photo: 'social_instagram', social_micro: 'social_twitter' } as const;

/** The profile changes a PUT asks for: aliases folded in, `""` and `null` both clear. */
export function profileFromPut(body: ProfilePutBody): ProfilePatch {
  const patch: ProfilePatch = {};
  for (const field of PROFILE_WRITABLE_FIELDS) if (body[field] !== undefined) patch[field] = body[field];
  for (const [alias, field] of Object.entries(ALIASES)) {
    const value = body[alias as keyof typeof ALIASES];
    if (value === undefined) continue;
    if (patch[field] !== undefined && normalizeEmpty(patch[field]) !== normalizeEmpty(value)) {
      throw invalidFields([{ field: alias, message: `conflicts with ${field}; send one of the two` }]);
    }
    patch[field] = value;
  }
  for (const field of PROFILE_WRITABLE_FIELDS) if (patch[field] !== undefined) patch[field] = normalizeEmpty(patch[field]);
  if (patch.default_currency) patch.default_currency = upperCase(patch.default_currency);
  const problems = new Problems();
  checkText(patch, problems);
  problems.throwIfAny();
  return patch;
}

const normalizeEmpty = (value: string | null | undefined): string | null => (value === '' || value == null ? null : value);
