/**
 * The one reading of `If-None-Match` (RFC 9110 §13.1.2), for the API, the public pages and the images
 * (docs/api.md, Conditional requests): `*` alone names any current representation; otherwise the field
 * is a comma-separated list of entity tags, compared weakly (a `W/` prefix on either side is ignored).
 * `*` inside a list is no `*` (the grammar allows it only alone), and a list matches only by its tags.
 */
export function ifNoneMatch(field: string | undefined, current: string): 'etag' | 'any' | undefined {
  if (field === undefined) return undefined;
  const value = field.trim();
  if (value === '*') return 'any';
  const opaque = current.startsWith('W/') ? current.slice(2) : current;
  for (const match of value.matchAll(/(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/g)) {
    if (match[1] === opaque) return 'etag';
  }
  return undefined;
}

/** Whether the field matches the current tag, `*` counting only when a representation `exists`. */
export function ifNoneMatchMatches(field: string, current: string, exists: boolean): boolean {
  const match = ifNoneMatch(field, current);
  return match === 'etag' || (match === 'any' && exists);
}
