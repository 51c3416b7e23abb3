/** String formats of the contract: http(s) URLs, calendar dates, ISO 8601 timestamps. */

export const isHttpUrl = (value: string): boolean => {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
};

export const isCalendarDate = (value: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
};

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Canonical UTC form of an ISO 8601 timestamp; a time without zone is read as UTC. */
export function toCanonicalTimestamp(value: string): string | undefined {
  if (!ISO_TIMESTAMP.test(value)) return undefined;
  const zoned = /T|\s/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? `${value}Z` : value;
  const ms = Date.parse(zoned.replace(' ', 'T'));
  return Number.isNaN(ms) || !isCalendarDate(value.slice(0, 10)) ? undefined : new Date(ms).toISOString();
}

